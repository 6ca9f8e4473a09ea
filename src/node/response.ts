/**
 * WHATWG `Response` → Node `ServerResponse`, streaming with backpressure.
 *
 * @module
 */
import type { ServerResponse } from "node:http";

/**
 * Write `response` to `res`: status, headers (every `Set-Cookie` line kept),
 * then the body chunk by chunk, waiting for `'drain'` whenever `res.write`
 * returns false. For HEAD (and 204/304) no body is sent, but the handler's
 * `Content-Length` is kept. Resolves when the response is finished or the
 * client has gone. A failing body stream destroys the socket (the client sees
 * a truncated response, never a wrong complete one) and the error is rethrown
 * for the caller to log.
 */
export async function writeResponse(response: Response, res: ServerResponse, method: string): Promise<void> {
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  for (const [name, value] of response.headers) {
    if (name === "set-cookie") continue;
    res.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);

  const body = response.body;
  if (body === null || method === "HEAD" || response.status === 204 || response.status === 304) {
    await body?.cancel().catch(() => {});
    res.end();
    return;
  }
  await pipeBody(body, res);
}

async function pipeBody(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> {
  const reader = body.getReader();
  let gone = false;
  const onClose = (): void => {
    gone = true;
    reader.cancel().catch(() => {});
  };
  res.once("close", onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (gone) return;
      if (!res.write(value)) await drained(res);
      if (gone) return;
    }
    res.end();
  } catch (error) {
    res.destroy();
    if (!gone) throw error;
  } finally {
    res.off("close", onClose);
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
