/**
 * A small fetch handler that exercises what an adapter must carry: streamed
 * bodies both ways, HEAD, repeated headers, errors, aborts. Routes live under
 * `/v2/_test/` so that every adapter mounts it exactly like the registry.
 */
import { createHash } from "node:crypto";

/** Deterministic pseudo-random bytes: chunk `i` of a stream of `size` bytes. */
export function* patternChunks(size: number, chunkSize = 1 << 20): Generator<Buffer> {
  const base = Buffer.alloc(chunkSize);
  let x = 0x9e3779b9;
  for (let i = 0; i < chunkSize; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    base.writeUInt32LE(x >>> 0, i);
  }
  for (let offset = 0, n = 0; offset < size; offset += chunkSize, n++) {
    const chunk = Buffer.from(base.subarray(0, Math.min(chunkSize, size - offset)));
    chunk.writeUInt32LE(n, 0);
    yield chunk;
  }
}

/** SHA-256 (hex) of {@link patternChunks}. */
export function patternSha256(size: number): string {
  const hash = createHash("sha256");
  for (const chunk of patternChunks(size)) hash.update(chunk);
  return hash.digest("hex");
}

/** What the handler observed, for assertions. */
export interface Observations {
  /** Resolves with the abort reason when a `/abort` request's signal fires. */
  aborted: Promise<string>;
  /** Set when `/abort` has received its first bytes. */
  abortStarted: Promise<void>;
  /** Number of `/no-read` requests whose body was never read. */
  noReadCalls: number;
}

/** Build the test handler and the record of what it saw. */
export function createTestHandler(): { handler: (request: Request) => Promise<Response>; seen: Observations } {
  let resolveAborted!: (reason: string) => void;
  let resolveStarted!: () => void;
  const seen: Observations = {
    aborted: new Promise((r) => (resolveAborted = r)),
    abortStarted: new Promise((r) => (resolveStarted = r)),
    noReadCalls: 0,
  };
  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const route = url.pathname.replace(/^\/v2\/_test/, "");
    switch (route) {
      case "/hash": {
        const hash = createHash("sha256");
        let size = 0;
        await eachChunk(request.body, (chunk) => {
          hash.update(chunk);
          size += chunk.byteLength;
        });
        return Response.json({ sha256: hash.digest("hex"), size }, { status: request.method === "PUT" ? 201 : 200 });
      }
      case "/blob": {
        const size = Number(url.searchParams.get("size") ?? "0");
        const chunks = patternChunks(size);
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            const next = chunks.next();
            if (next.done) controller.close();
            else controller.enqueue(next.value);
          },
        });
        return new Response(body, { headers: { "content-length": String(size), "content-type": "application/octet-stream" } });
      }
      case "/echo": {
        const headers = new Headers({ "content-type": "application/json" });
        headers.append("set-cookie", "a=1; Path=/");
        headers.append("set-cookie", "b=2; Path=/");
        headers.append("link", '</v2/_test/echo?n=2>; rel="next"');
        headers.append("link", '</v2/_test/echo?n=0>; rel="prev"');
        return new Response(
          JSON.stringify({ method: request.method, url: request.url, dup: request.headers.get("x-dup"), headers: [...request.headers] }),
          { headers },
        );
      }
      case "/throw":
        throw new Error("boom (test)");
      case "/broken-body": {
        let sent = false;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (!sent) {
              sent = true;
              controller.enqueue(new Uint8Array(1024));
            } else controller.error(new Error("storage failed mid-stream (test)"));
          },
        });
        return new Response(body, { headers: { "content-length": "100000" } });
      }
      case "/abort": {
        request.signal.addEventListener("abort", () => resolveAborted(String(request.signal.reason)));
        try {
          await eachChunk(request.body, () => resolveStarted());
        } catch {
          // the body errors too when the client goes away
        }
        return new Response("done");
      }
      case "/no-read":
        seen.noReadCalls++;
        return new Response(JSON.stringify({ errors: [{ code: "UNAUTHORIZED" }] }), { status: 401 });
      default:
        return new Response("not found", { status: 404 });
    }
  };
  return { handler, seen };
}

async function eachChunk(body: ReadableStream<Uint8Array> | null, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  if (!body) return;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onChunk(value);
  }
}
