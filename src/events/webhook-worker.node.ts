/**
 * Webhook POSTs made by one worker thread of the process (see
 * `nodeWebhookPost({ worker: true })`). A registry serving pulls is bound by
 * its one JavaScript thread; an envelope of a thousand pulls is about 650 KB,
 * and writing it to a socket is a syscall of that thread (on loopback the
 * receiver's TCP work runs inside it too). The request thread now only copies
 * the envelope into a message (~0.1 ms) and the worker sends it: side by side
 * with a webhook sink, 1.01–1.02× the manifest GETs a second (bench/compare.ts).
 *
 * The worker's program is the source text below, run with `eval`: a file of its
 * own would have to be found beside whichever bundle or chunk imports this
 * module. It is one thread for the whole process, started at the first POST,
 * holding the process open only while a POST is under way, and started again
 * after it fails.
 *
 * @module
 */
import { Worker } from "node:worker_threads";
import type { WebhookPost } from "./endpoint.js";

/** What the request thread sends: a POST, or that one was given up. */
type ToWorker = { id: number; url: string; lines: string[]; body: Uint8Array } | { abort: number };
/** What the worker answers for a POST: its status, or why it failed. */
type FromWorker = { id: number; status: number } | { id: number; message: string; code?: string };

/**
 * The worker's program (CommonJS, as `eval` runs it). It POSTs with keep-alive
 * agents, resolves on the answer's headers and discards the body, as
 * `nodeWebhookPost` does in the calling thread.
 */
const PROGRAM = `
const { parentPort } = require("node:worker_threads");
const http = require("node:http");
const https = require("node:https");
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
const requests = new Map();
const answer = (id, reply) => {
  if (requests.delete(id)) parentPort.postMessage(reply);
};
parentPort.on("message", (message) => {
  if (message.abort !== undefined) {
    requests.get(message.abort)?.destroy();
    requests.delete(message.abort);
    return;
  }
  const { id, url, lines, body } = message;
  const secure = url.startsWith("https:");
  try {
    const request = (secure ? https : http).request(url, { method: "POST", headers: lines, agent: secure ? agents.https : agents.http }, (response) => {
      response.on("error", () => {});
      response.resume();
      answer(id, { id, status: response.statusCode ?? 0 });
    });
    requests.set(id, request);
    request.on("error", (error) => answer(id, { id, message: String(error && error.message), code: error && error.code }));
    request.end(body);
  } catch (error) {
    parentPort.postMessage({ id, message: String(error && error.message), code: error && error.code });
  }
});
`;

/** A POST under way: settling it ends it (see {@link settled}). */
interface Waiting {
  resolve(status: number): void;
  reject(error: Error): void;
}

let worker: Worker | undefined;
const waiting = new Map<number, Waiting>();
let lastId = 0;

/** The process's POST thread, started on first use (and again after it failed). */
function thread(): Worker {
  if (worker) return worker;
  const started = new Worker(PROGRAM, { eval: true });
  started.unref();
  started.on("message", (reply: FromWorker) => {
    const entry = waiting.get(reply.id);
    if (!entry) return; // given up by its signal meanwhile
    if ("status" in reply) entry.resolve(reply.status);
    else entry.reject(Object.assign(new Error(reply.message), reply.code === undefined ? {} : { code: reply.code }));
  });
  // Its "error" is followed by its "exit": only the first counts, and only while it is the current thread (the
  // POSTs waiting then were all sent to it).
  const failed = (error: Error): void => {
    if (worker !== started) return;
    worker = undefined;
    for (const entry of [...waiting.values()]) entry.reject(error);
  };
  started.on("error", failed);
  started.on("exit", (code) => failed(new Error(`the webhook worker thread exited (code ${code})`)));
  worker = started;
  return started;
}

/** A POST is over: the thread no longer holds the process open once none is under way. */
function settled(id: number): void {
  waiting.delete(id);
  if (waiting.size === 0) worker?.unref();
}

/** The `WebhookPost` of `nodeWebhookPost({ worker: true })`; `lines` makes the header list as that does. */
export function workerPost(lines: (url: string, headers: readonly (readonly [string, string])[], length: number) => string[]): WebhookPost {
  return (url, headers, body, signal) =>
    new Promise<number>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const id = ++lastId;
      const target = thread();
      const onAbort = (): void => {
        if (!waiting.has(id)) return;
        target.postMessage({ abort: id } satisfies ToWorker);
        waiting.get(id)!.reject(signal.reason as Error);
      };
      // Every way a POST ends goes through here: it leaves `waiting` and stops listening to its signal.
      const end = (): void => {
        settled(id);
        signal.removeEventListener("abort", onAbort);
      };
      waiting.set(id, {
        resolve(status) {
          end();
          resolve(status);
        },
        reject(error) {
          end();
          reject(error);
        },
      });
      signal.addEventListener("abort", onAbort, { once: true });
      if (waiting.size === 1) target.ref();
      try {
        // Copied, not transferred: the caller's buffer stays its own.
        target.postMessage({ id, url, lines: lines(url, headers, body.length), body } satisfies ToWorker);
      } catch (error) {
        waiting.get(id)!.reject(error as Error);
      }
    });
}
