/**
 * Which repositories the pull-through cache serves from which upstream: the
 * options of `createRegistry({ pullThrough })` and their resolution to the
 * upstream of a repository name (longest prefix wins).
 *
 * @module
 */
import { Flights } from "./flights.js";
import type { Upstream } from "./upstream.js";

/** One upstream and the local repositories it fills. */
export interface PullThroughUpstream {
  /**
   * Local repository names starting with this are pulled from `upstream`, the
   * prefix removed: with `"hub/"`, `hub/library/alpine` is `library/alpine`
   * upstream. `""` proxies every repository (Distribution's `proxy.remoteurl`).
   * Otherwise it ends with `/`.
   */
  prefix: string;
  /** Where to fetch from; `registryUpstream()` of `registry-kit/client` for an HTTP registry. */
  upstream: Upstream;
  /**
   * A cached tag is served without asking the upstream for this long after it
   * was fetched or last confirmed; then one `HEAD` confirms it (no `GET` when
   * the digest is unchanged). Default 300 (5 minutes); 0 asks on every pull.
   * Manifests and blobs by digest never change and are never asked again.
   */
  ttlSeconds?: number;
  /** Accept pushes (and deletes) to these repositories beside the cached content. Default false: 405 `UNSUPPORTED`. */
  allowPush?: boolean;
}

/** Options of the pull-through cache (`createRegistry({ pullThrough })`). */
export interface PullThroughOptions {
  /** The upstreams by prefix; repositories no prefix covers are local (pushed) ones. */
  upstreams: readonly PullThroughUpstream[];
}

/** An upstream as a repository resolved to it. */
export interface ResolvedUpstream {
  upstream: Upstream;
  /** The repository's name upstream. */
  remoteName: string;
  ttlMs: number;
  allowPush: boolean;
  /** The configured prefix, for logs and headers. */
  prefix: string;
}

/** The resolved pull-through configuration: `lookup(name)` finds a repository's upstream. */
export interface PullThrough {
  lookup(name: string): ResolvedUpstream | undefined;
  /** Upstream fetches under way in this process. */
  flights: Flights;
}

const PREFIX = /^(?:[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*\/)*$/;

/** Check the options and build the lookup (throws `TypeError` on a bad prefix or ttl). */
export function resolvePullThrough(options: PullThroughOptions): PullThrough {
  const entries = options.upstreams.map((u) => {
    if (!PREFIX.test(u.prefix)) throw new TypeError(`pullThrough prefix ${JSON.stringify(u.prefix)} must be "" or repository path components ending in "/"`);
    const ttl = u.ttlSeconds ?? 300;
    if (!(Number.isFinite(ttl) && ttl >= 0)) throw new TypeError("pullThrough ttlSeconds must be a number >= 0");
    if (!u.upstream || typeof u.upstream.getBlob !== "function") throw new TypeError(`pullThrough upstream of prefix ${JSON.stringify(u.prefix)} is missing`);
    return { prefix: u.prefix, upstream: u.upstream, ttlMs: ttl * 1000, allowPush: u.allowPush ?? false };
  });
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.prefix)) throw new TypeError(`pullThrough prefix ${JSON.stringify(e.prefix)} is given twice`);
    seen.add(e.prefix);
  }
  // Longest prefix first, so "hub/private/" wins over "hub/".
  entries.sort((a, b) => b.prefix.length - a.prefix.length);
  return {
    flights: new Flights(),
    lookup(name) {
      const hit = entries.find((e) => name.startsWith(e.prefix) && name.length > e.prefix.length);
      return hit && { ...hit, remoteName: name.slice(hit.prefix.length) };
    },
  };
}
