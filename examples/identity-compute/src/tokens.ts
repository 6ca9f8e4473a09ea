/**
 * Tokens of the identity example: opaque random bearer strings, held in a
 * store behind the small {@link TokenStore} contract.
 *
 * Design choice: tokens are **opaque**, 32 random bytes in unpadded base64url
 * (43 characters), not signed and stateless. That makes revocation exact
 * (`DELETE /v3/auth/tokens` removes the record) and keeps nothing secret in
 * the token itself. The price is that every validation looks the token up in
 * the store, so several processes must share one store (implement
 * {@link TokenStore} over a shared database) or validate through the identity
 * service over HTTP.
 *
 * The memory store never keeps the bearer strings: records are keyed by the
 * SHA-256 of the token, so a heap dump or a log of keys reveals no usable
 * token.
 *
 * @module
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { randomString } from "./util.js";

/** A domain reference as keystone writes it in token bodies. */
export interface DomainRef {
  id: string;
  name: string;
}

/** A project reference as keystone writes it in token bodies. */
export interface ProjectRef {
  id: string;
  name: string;
  domain: DomainRef;
}

/** A role reference (`{id, name}`) as keystone writes it in token bodies. */
export interface RoleRef {
  id: string;
  name: string;
}

/** Everything the services need to know about a valid token. */
export interface TokenRecord {
  /** Authentication methods that produced the token (`["password"]`, or `["password","token"]` after rescoping). */
  methods: string[];
  user: { id: string; name: string; domain: DomainRef };
  /** Whether the user is a system administrator (from the credential check). */
  admin: boolean;
  /** Present only on a project-scoped token. */
  project?: ProjectRef;
  /** Roles on {@link project}; empty for an unscoped token. */
  roles: RoleRef[];
  /** Milliseconds since the epoch. */
  issuedAt: number;
  /** Milliseconds since the epoch; the token is invalid from this instant on. */
  expiresAt: number;
  /** Keystone's audit ids: the first identifies this token, a second (after rescoping) the token it came from. Not secret. */
  auditIds: string[];
}

/**
 * Where issued tokens live. Three methods; implementations must treat an
 * expired token exactly like an unknown one.
 */
export interface TokenStore {
  /** Store `record` and return the new bearer token string. */
  issue(record: TokenRecord): Promise<string>;
  /** The record of a live token, or `undefined` when unknown, revoked or expired. */
  get(token: string): Promise<TokenRecord | undefined>;
  /** Revoke a token. Resolves to `false` when it was not live. */
  revoke(token: string): Promise<boolean>;
}

/** Options of {@link memoryTokenStore}. */
export interface MemoryTokenStoreOptions {
  /** Upper bound on stored tokens; at the bound, expired ones are swept and then the oldest dropped. Default 10 000. */
  maxTokens?: number;
  /** The clock, in milliseconds (for tests). Default `Date.now`. */
  now?: () => number;
}

/** Length of a token produced by {@link memoryTokenStore}: 32 random bytes, base64url. */
export const TOKEN_BYTES = 32;

/** Reject obviously foreign strings before hashing them: base64url, bounded length. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,512}$/;

/**
 * A fresh token: {@link TOKEN_BYTES} random bytes in base64url, drawn again
 * while it starts with `-`. Command lines take such a token for an option:
 * `openstack token revoke <token>` (argparse) refused one token in 64.
 */
export function newToken(): string {
  for (;;) {
    const token = randomString(TOKEN_BYTES);
    if (token[0] !== "-") return token;
  }
}

/** An in-memory {@link TokenStore} for the example and for tests. */
export function memoryTokenStore(options: MemoryTokenStoreOptions = {}): TokenStore {
  const maxTokens = options.maxTokens ?? 10_000;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new RangeError("maxTokens must be a positive integer");
  const now = options.now ?? Date.now;
  const records = new Map<string, TokenRecord>();
  const key = (token: string) => bytesToHex(sha256(utf8ToBytes(token)));

  function sweep(): void {
    const t = now();
    for (const [k, r] of records) if (r.expiresAt <= t) records.delete(k);
    // Map iteration is insertion order: the first entries are the oldest.
    for (const k of records.keys()) {
      if (records.size < maxTokens) break;
      records.delete(k);
    }
  }

  return {
    async issue(record) {
      if (records.size >= maxTokens) sweep();
      const token = newToken();
      records.set(key(token), structuredClone(record));
      return token;
    },
    async get(token) {
      if (!TOKEN_SHAPE.test(token)) return undefined;
      const k = key(token);
      const r = records.get(k);
      if (!r) return undefined;
      if (r.expiresAt <= now()) {
        records.delete(k);
        return undefined;
      }
      return structuredClone(r);
    },
    async revoke(token) {
      if (!TOKEN_SHAPE.test(token)) return false;
      const k = key(token);
      const r = records.get(k);
      records.delete(k);
      return r !== undefined && r.expiresAt > now();
    },
  };
}
