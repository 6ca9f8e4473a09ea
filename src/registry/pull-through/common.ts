/**
 * What the manifest and blob sides of the pull-through cache share: the
 * in-process single flights, the answer when the upstream fails, and the
 * headers that say where a response came from.
 *
 * @module
 */
import { RegistryError } from "../../oci/errors.js";
import type { LogHook } from "../../http/log.js";
import type { ResolvedUpstream } from "./options.js";

/**
 * Fetches under way in this process, by key, so that concurrent pulls of one
 * missing object make one upstream request: the first caller runs it, the
 * others wait for it and then read what it stored. Only a saving: another
 * process sharing the storage makes its own request (rule 5 holds).
 */
export class Flights {
  readonly #running = new Map<string, Promise<unknown>>();

  /** The fetch under way for `key`, if any (to wait for it: what it stored is read from storage). */
  get(key: string): Promise<void> | undefined {
    return this.#running.get(key) as Promise<void> | undefined;
  }

  /** Run `fn` as the flight of `key` (the caller checked there was none) and forget it once settled. */
  start<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const flight = fn().finally(() => this.#running.delete(key));
    this.#running.set(key, flight);
    // Followers and the leader observe the outcome; nobody may leave it unhandled.
    flight.catch(() => {});
    return flight;
  }

  /**
   * The answer of the flight of `key` under way, or of `fn` run as it: for
   * questions whose answer is shared rather than stored (a blob `HEAD`).
   * Each key is used for one kind of answer only.
   */
  join<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return (this.#running.get(key) as Promise<T> | undefined) ?? this.start(key, fn);
  }
}

/** The `Cache-Status` (RFC 9211) of a response of the cache. */
export type CacheOutcome = "hit" | "revalidated" | "stored" | "forwarded" | "stale";

const CACHE_STATUS: Record<CacheOutcome, string> = {
  hit: "registry-kit; hit",
  revalidated: "registry-kit; fwd=stale; fwd-status=200",
  stored: "registry-kit; fwd=uri-miss; stored",
  forwarded: "registry-kit; fwd=uri-miss",
  stale: 'registry-kit; hit; detail="stale-if-error"',
};

/**
 * Mark `response` with its `Cache-Status`; a copy served because the upstream
 * failed also gets `Warning: 110` ("Response is Stale", RFC 7234), which
 * clients and proxies that predate `Cache-Status` understand.
 */
export function marked(response: Response, outcome: CacheOutcome): Response {
  response.headers.set("Cache-Status", CACHE_STATUS[outcome]);
  if (outcome === "stale") response.headers.set("Warning", '110 registry-kit "Response is Stale"');
  return response;
}

/**
 * The error to answer when the upstream failed and nothing is cached: 403
 * `DENIED` when the upstream refused the repository to the proxy's account
 * (a `401` or `403` to the repository's own request, not to a login: see
 * `Upstream`), 429 `TOOMANYREQUESTS` when it rate-limited us, else 502
 * `UNKNOWN`. The upstream's own error text stays in the log (it may name hosts
 * or users).
 */
export function upstreamFailure(up: ResolvedUpstream, error: unknown, log: LogHook, what: string): RegistryError {
  if (error instanceof RegistryError) return error;
  log({ level: "warn", msg: `pull-through: upstream ${what} failed`, prefix: up.prefix, repository: up.remoteName, error });
  const failed = error as { status?: unknown; refused?: unknown } | null;
  if (failed?.refused === "repository" && (failed.status === 401 || failed.status === 403)) {
    // Not 401: the caller passed this registry's own check; asking them to sign in again would change nothing.
    return new RegistryError("DENIED", "the upstream registry refused this repository to the pull-through cache's account", 403, { prefix: up.prefix });
  }
  if ((error as { status?: unknown } | null)?.status === 429) {
    return new RegistryError("TOOMANYREQUESTS", "the upstream registry is rate limiting requests; try again later", 429, { prefix: up.prefix });
  }
  return new RegistryError("UNKNOWN", "the upstream registry could not be reached", 502, { prefix: up.prefix });
}
