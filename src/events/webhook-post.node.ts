/**
 * Webhook POSTs through node:http and node:https with keep-alive agents, for
 * `createNotifier({ post })`: on Node 20 a 650 KiB envelope costs about
 * 0.6 ms of CPU this way against about 3 ms through `fetch`, and a busy
 * registry sends one per thousand pulls. With `worker: true` the POSTs are made
 * by a worker thread (webhook-worker.node.ts).
 *
 * @module
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { WebhookPost } from "./endpoint.js";
import { workerPost } from "./webhook-worker.node.js";

/** Options of {@link nodeWebhookPost}. */
export interface NodeWebhookPostOptions {
  /**
   * POST from a worker thread of the process instead of the calling one (see
   * webhook-worker.node.ts): the thread serving requests is spared the socket
   * writes of each envelope. What `registry-kit serve` uses. Default false.
   */
  worker?: boolean;
}

/**
 * A `WebhookPost` over node:http(s): it resolves to the status once the
 * answer's headers are in and discards the body (the endpoint's timeout still
 * ends a body that never finishes); redirects are not followed, as with the
 * default.
 */
export function nodeWebhookPost(options: NodeWebhookPostOptions = {}): WebhookPost {
  if (options.worker) return workerPost(headerLines);
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  return (url, headers, body, signal) =>
    new Promise<number>((resolve, reject) => {
      const lines = headerLines(url, headers, body.length);
      const secure = url.startsWith("https:");
      const answered = (response: IncomingMessage): void => {
        response.on("error", () => {}); // an answer cut while discarded: the status counts
        response.resume();
        resolve(response.statusCode ?? 0);
      };
      try {
        const request = secure
          ? httpsRequest(url, { method: "POST", headers: lines, agent: agents.https, signal }, answered)
          : httpRequest(url, { method: "POST", headers: lines, agent: agents.http, signal }, answered);
        request.on("error", reject);
        request.end(body);
      } catch (error) {
        reject(error);
      }
    });
}

/**
 * The header lines as a flat [name, value, …] list, the form the registry's
 * responses are written in (src/node/response.ts): node:http's header code
 * then sees one kind of value from both. Node adds no Host to such a list; it
 * is added here unless the endpoint's headers name one.
 */
function headerLines(url: string, headers: readonly (readonly [string, string])[], length: number): string[] {
  const lines: string[] = [];
  let host = false;
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (lower === "content-length") continue;
    if (lower === "host") host = true;
    lines.push(name, value);
  }
  if (!host) lines.unshift("Host", new URL(url).host);
  // A string: a number reaching node:http's header checks de-optimizes them for the whole process, the
  // registry's own responses included.
  lines.push("Content-Length", String(length));
  return lines;
}
