/**
 * A webhook sink on loopback for the benchmarks (`RK_BENCH_NOTIFY`, see
 * bench/server.ts): answers 200 to every POST and counts the events. It runs
 * on the machine it measures, so it does little: it checks each body's
 * envelope framing and counts `"timestamp":` (one per event, and found
 * nowhere else in registry-kit's envelopes) instead of parsing the JSON.
 */
import { createServer } from "node:http";

/** A running sink. */
export interface Sink {
  url: string;
  /** Events received so far. */
  events(): number;
  /** Bodies that were not an envelope. */
  malformed(): number;
  close(): void;
}

const MARK = Buffer.from('"timestamp":');

export async function startSink(): Promise<Sink> {
  let events = 0;
  let malformed = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (!body.subarray(0, 11).equals(Buffer.from('{"events":[')) || !body.subarray(-2).equals(Buffer.from("]}"))) malformed++;
      for (let at = body.indexOf(MARK); at >= 0; at = body.indexOf(MARK, at + MARK.length)) events++;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/events`, events: () => events, malformed: () => malformed, close: () => server.close() };
}
