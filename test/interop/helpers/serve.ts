/**
 * Serve a fetch handler in-process with registry-kit's Node adapter
 * (`serve()` from src/node) on 127.0.0.1:<free port>, behind a recording
 * wrapper so tests can assert on what a real client actually sent (e.g. that
 * a cross-repository `POST …?mount=` got 201).
 */
import { serve } from "../../../src/node/index.js";

export type Handler = (request: Request) => Promise<Response>;

export interface RecordedRequest {
  method: string;
  /** Path and query as received, e.g. `/v2/a/b/blobs/uploads/?mount=…&from=…`. */
  path: string;
  status: number;
  /** `Bearer`, `Basic` or undefined. */
  auth: string | undefined;
  userAgent: string | undefined;
  /** For 401 answers: the challenge sent. */
  challenge: string | undefined;
}

export interface Recorder {
  handler: Handler;
  requests: RecordedRequest[];
  /** One line per request, for assertion messages. */
  dump(): string;
  clear(): void;
}

/** Wrap a fetch handler so every request and its answer's status are recorded. */
export function recording(inner: Handler): Recorder {
  const requests: RecordedRequest[] = [];
  return {
    requests,
    async handler(request) {
      const url = new URL(request.url);
      const entry: RecordedRequest = {
        method: request.method,
        path: url.pathname + url.search,
        status: 0,
        auth: request.headers.get("authorization")?.split(" ")[0],
        userAgent: request.headers.get("user-agent") ?? undefined,
        challenge: undefined,
      };
      requests.push(entry);
      try {
        const response = await inner(request);
        entry.status = response.status;
        entry.challenge = response.headers.get("www-authenticate") ?? undefined;
        return response;
      } catch (err) {
        entry.status = -1;
        throw err;
      }
    },
    dump: () => requests.map((r) => `${r.method} ${r.path} -> ${r.status}${r.auth ? ` [${r.auth}]` : ""}`).join("\n"),
    clear: () => void requests.splice(0),
  };
}

export interface RunningService {
  url: string;
  /** host:port, for docker:// references. */
  host: string;
  recorder: Recorder;
  close(): Promise<void>;
}

/** Serve any fetch handler on 127.0.0.1:<free port>, recorded. */
export async function serveRecorded(handler: Handler): Promise<RunningService> {
  const recorder = recording(handler);
  const server = await serve(recorder.handler, { host: "127.0.0.1", port: 0 });
  return {
    url: server.url,
    host: new URL(server.url).host,
    recorder,
    close: () => server.close(2_000),
  };
}

