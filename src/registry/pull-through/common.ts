/**
 * What the manifest and blob sides of the pull-through cache share: the answer when the upstream fails, and the
 * headers that say where a response came from.
 *
 * @module
 */
import { RegistryError } from "../../oci/errors.js";
import type { LogHook } from "../../http/log.js";
import type { ResolvedUpstream } from "./options.js";

/** The `Cache-Status` (RFC 9211) of a response of the cache. */
export type CacheOutcome = "hit" | "revalidated" | "stored" | "forwarded" | "stale";

const CACHE_STATUS: Record<CacheOutcome, string> = {
  hit: "registry-kit; hit",
  revalidated: "registry-kit; fwd=stale; fwd-status=200",
  stored: "registry-kit; fwd=uri-miss; stored",
  forwarded: "registry-kit; fwd=uri-miss",
  stale: 'registry-kit; hit; detail="stale-if-error"',
};

const STALE_WARNING = '110 registry-kit "Response is Stale"';
const OUTCOME_HEADERS = Object.fromEntries(
  (Object.keys(CACHE_STATUS) as CacheOutcome[]).map((outcome) => [
    outcome,
    Object.freeze(outcome === "stale" ? { "Cache-Status": CACHE_STATUS[outcome], Warning: STALE_WARNING } : { "Cache-Status": CACHE_STATUS[outcome] }),
  ]),
) as unknown as Record<CacheOutcome, Readonly<Record<string, string>>>;

/**
 * The headers of a response of the cache: its `Cache-Status`; a copy served
 * because the upstream failed also gets `Warning: 110` ("Response is Stale",
 * RFC 7234), which clients and proxies that predate `Cache-Status` understand.
 */
export function outcomeHeaders(outcome: CacheOutcome): Readonly<Record<string, string>> {
  return OUTCOME_HEADERS[outcome];
}

/** What the pull-through wrapper needs of the registry's settings. */
export interface PullThroughSettings {
  log: LogHook;
  /** Largest manifest accepted (from upstream too). */
  manifestBytes: number;
  manifestMediaTypes: ReadonlySet<string>;
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
