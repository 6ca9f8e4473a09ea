/**
 * What the pull, push and upload flows share: the authenticated transport,
 * the progress and cancellation options, the token scopes they ask for, and
 * the status check every step makes.
 *
 * @module
 */
import { discard, errorFromResponse } from "./errors.js";
import { parseImageReference, type ImageReference } from "./reference.js";
import type { Transport } from "./transport.js";

/** The state a client's flows run over: one transport per client. */
export interface ClientContext {
  readonly transport: Transport;
}

/** Progress of one blob during a pull or push. */
export interface ProgressEvent {
  /** The blob's digest. */
  digest: string;
  /** Bytes transferred so far. */
  done: number;
  /** Total bytes. */
  total: number;
  /** `skipped` when the blob was already present (or mounted). */
  state: "started" | "progress" | "done" | "skipped";
}

/** Options shared by pull and push. */
export interface TransferOptions {
  /** Called for every blob as it starts, progresses, finishes or is skipped. */
  onProgress?: (event: ProgressEvent) => void;
  /** Aborts the transfer. */
  signal?: AbortSignal;
}

/** A reference as given by the caller, parsed when it is a string. */
export function toRef(ref: ImageReference | string): ImageReference {
  return typeof ref === "string" ? parseImageReference(ref) : ref;
}

/** The token scope to read a repository. */
export function pullScope(repository: string): string[] {
  return [`repository:${repository}:pull`];
}

/** The token scope to write a repository. */
export function pushScope(repository: string): string[] {
  return [`repository:${repository}:pull,push`];
}

/**
 * Check a response's status: on one of `ok`, discard the body and return the
 * response; otherwise throw the typed error read from its body.
 */
export async function expectStatus(response: Response, ok: readonly number[], what: string): Promise<Response> {
  if (!ok.includes(response.status)) throw await errorFromResponse(response, what);
  discard(response);
  return response;
}
