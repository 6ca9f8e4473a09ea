/**
 * The Node request listener around a fetch handler.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import { silent, type LogHook } from "../http/log.js";
import { onlyReadsRequestBasics } from "../runtime/adapter-capabilities.js";
import { rememberPeer } from "../http/client-address.js";
import { BadRequestError, toRequest, type RequestOptions } from "./request.js";
import { writeResponse } from "./response.js";
import { countRequest } from "./old-generation.js";
import { anchorTickObjects } from "./tick-anchor.js";

/** A fetch handler, as every registry-kit service is. */
export type FetchHandler = (request: Request) => Promise<Response> | Response;

/** A Node `http` request listener, usable with `http.createServer`, Express or Connect. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions extends RequestOptions {
  /** Receives handler failures and broken response streams. Never given request bodies. */
  log?: LogHook;
}

/**
 * The two listeners a server needs: `request`, and `checkContinue` for
 * requests with `Expect: 100-continue`. The latter sends `100 Continue` only
 * once the handler starts reading the body, so a request refused before that
 * (a 401, say) is answered without the client uploading anything.
 */
export interface NodeListeners {
  /** The `request` listener. */
  request: NodeListener;
  /** The `checkContinue` listener. */
  checkContinue: NodeListener;
}

/** Build both listeners for `handler`; {@link serve} installs both. */
export function createNodeListeners(handler: FetchHandler, options: NodeListenerOptions = {}): NodeListeners {
  // Node's streams build tick objects on every request: keep their hidden classes through idle-time collections.
  anchorTickObjects();
  const log = options.log ?? silent;
  const basicsOnly = onlyReadsRequestBasics(handler);
  const run = (req: IncomingMessage, res: ServerResponse, deferContinue: boolean): void => {
    countRequest();
    handle(handler, req, res, deferContinue, options, basicsOnly).catch((error: unknown) => {
      log({ level: "error", msg: "node adapter failure", error: String(error) });
      if (!res.headersSent) sendError(res, 500, "internal server error");
      else res.destroy();
    });
  };
  return {
    request: (req, res) => run(req, res, false),
    checkContinue: (req, res) => run(req, res, true),
  };
}

/**
 * Turn a fetch handler into a Node request listener. Only translates: see
 * docs/adapters.md for what is carried each way. A handler that throws gets
 * a generic 500 (logged through `options.log`), never a crash.
 *
 * When mounted in Express (`app.use("/v2", listener)`) the full path is taken
 * from `req.originalUrl`, so the handler sees `/v2/...` as it expects.
 */
export function toNodeListener(handler: FetchHandler, options: NodeListenerOptions = {}): NodeListener {
  return createNodeListeners(handler, options).request;
}

async function handle(
  handler: FetchHandler,
  req: IncomingMessage,
  res: ServerResponse,
  deferContinue: boolean,
  options: NodeListenerOptions,
  basicsOnly: boolean,
): Promise<void> {
  const log = options.log ?? silent;
  // The signal is made only when a handler asks for it (most never do).
  let controller: AbortController | undefined;
  let disconnected = false;
  const signal = (): AbortSignal => {
    if (!controller) {
      controller = new AbortController();
      if (disconnected) controller.abort(new Error("client disconnected"));
    }
    return controller.signal;
  };
  res.once("close", () => {
    // An HTTP/2 stream reset by the client also ends "finished": its request says it was aborted.
    if (res.writableFinished && (req.httpVersionMajor !== 2 || !(req as unknown as Http2ServerRequest).aborted)) return;
    disconnected = true;
    controller?.abort(new Error("client disconnected"));
  });
  let continued = !deferContinue;
  const sendContinue = (): void => {
    if (continued || res.headersSent) return;
    continued = true;
    res.writeContinue();
  };
  let request: Request;
  try {
    request = toRequest(req, signal, options, sendContinue, basicsOnly);
    rememberPeer(request, req.socket?.remoteAddress);
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error;
    res.shouldKeepAlive = false;
    sendError(res, 400, error.message);
    return;
  }
  let response: Response;
  try {
    response = await handler(request);
  } catch (error) {
    log({ level: "error", msg: "handler threw", method: req.method, url: req.url, error: String(error) });
    if (!continued) res.shouldKeepAlive = false;
    sendError(res, 500, "internal server error");
    return;
  }
  // The client is still waiting to send a body we never asked for: close afterwards.
  if (!continued) res.shouldKeepAlive = false;
  try {
    await writeResponse(response, res, req.method ?? "GET");
  } catch (error) {
    log({ level: "warn", msg: "response body failed", method: req.method, url: req.url, error: String(error) });
  }
}

function sendError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const code = status === 400 ? "BAD_REQUEST" : "UNKNOWN";
  const body = JSON.stringify({ errors: [{ code, message, detail: null }] });
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}
