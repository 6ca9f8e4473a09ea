/**
 * Password hashing with scrypt (`@noble/hashes`, async so it yields to the
 * event loop). Each hash has its own random 16-byte salt, and its parameters
 * travel with it, so they can be raised later without breaking old hashes:
 *
 *     scrypt$<N>$<r>$<p>$<salt, base64>$<32-byte key, base64>
 *
 * Comparison is constant-time. Passwords longer than {@link MAX_PASSWORD_LENGTH}
 * characters are never hashed.
 *
 * @module
 */
import { scryptAsync } from "@noble/hashes/scrypt.js";
import { b64, fromB64 } from "../util/bytes.js";

/** The scrypt cost parameters. */
export interface ScryptParams {
  /** CPU/memory cost, a power of two (2^1 … 2^20). */
  N: number;
  /** Block size (1 … 32). */
  r: number;
  /** Parallelism (1 … 16). */
  p: number;
}

/**
 * The default cost: N = 2^14, r = 8, p = 1 (16 MiB of memory). About 0.1 s per
 * hash on one core of a current server with the pure-JS scrypt; raise it with
 * the `scrypt` option of the user service and the credential check.
 */
export const DEFAULT_SCRYPT: Readonly<ScryptParams> = Object.freeze({ N: 2 ** 14, r: 8, p: 1 });

/** The longest password (in characters) that is ever hashed. */
export const MAX_PASSWORD_LENGTH = 128;

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const MAX_MEMORY = 1024 ** 3; // 1 GiB, the scrypt library's own limit

/** Complete and check scrypt parameters; throws a `RangeError` on bad ones. */
export function scryptParams(params: Partial<ScryptParams> = {}): ScryptParams {
  const full = { ...DEFAULT_SCRYPT, ...params };
  if (!acceptable(full)) throw new RangeError("scrypt parameters out of range");
  return full;
}

/** Hash a password with a fresh random salt. Throws a `RangeError` for an over-long password. */
export async function hashPassword(password: string, params: Partial<ScryptParams> = {}): Promise<string> {
  if (tooLong(password)) throw new RangeError(`password longer than ${MAX_PASSWORD_LENGTH} characters`);
  const p = scryptParams(params);
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const key = await derive(password, salt, p);
  return `scrypt$${p.N}$${p.r}$${p.p}$${b64(salt)}$${b64(key)}`;
}

/**
 * Whether `password` matches an encoded hash. Never throws: a malformed hash or
 * an over-long password is simply no match (after spending the same work as a
 * real check, using `fallback` parameters).
 */
export async function verifyPassword(password: string, encoded: string, fallback: Partial<ScryptParams> = {}): Promise<boolean> {
  const parsed = parseHash(encoded);
  if (!parsed || tooLong(password)) {
    await spendDummy(password, fallback);
    return false;
  }
  const key = await derive(password, parsed.salt, parsed.params);
  return constantTimeEqual(key, parsed.key);
}

/**
 * Spend the work of one verification without a usable hash to check against
 * (a malformed hash, an over-long password), so that the refusal takes as
 * long as a real check with `params`.
 */
export async function spendDummy(password: string, params: Partial<ScryptParams> = {}): Promise<void> {
  const text = tooLong(password) ? "" : password;
  await derive(text, new Uint8Array(SALT_BYTES), scryptParams(params));
}

/**
 * An encoded hash in the format of {@link hashPassword}, with `params` and a
 * random salt and key, that no password matches (but with probability
 * 2^-256). Verifying a password against it costs exactly what verifying
 * against a real hash with these parameters costs: the credential check does
 * so for unknown users. Made without running scrypt.
 */
export function dummyHash(params: Partial<ScryptParams> = {}): string {
  const p = scryptParams(params);
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const key = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
  return `scrypt$${p.N}$${p.r}$${p.p}$${b64(salt)}$${b64(key)}`;
}

/** Whether a hash was made with other parameters than `params` (a caller may re-hash on the next password change). */
export function needsRehash(encoded: string, params: Partial<ScryptParams> = {}): boolean {
  const parsed = parseHash(encoded);
  const want = scryptParams(params);
  return !parsed || parsed.params.N !== want.N || parsed.params.r !== want.r || parsed.params.p !== want.p;
}

/** Compare two byte arrays in time that depends only on their lengths. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

function tooLong(password: string): boolean {
  return password.length > MAX_PASSWORD_LENGTH * 2 || [...password].length > MAX_PASSWORD_LENGTH;
}

function acceptable(p: ScryptParams): boolean {
  return (
    Number.isInteger(p.N) && p.N >= 2 && p.N <= 2 ** 20 && (p.N & (p.N - 1)) === 0 &&
    Number.isInteger(p.r) && p.r >= 1 && p.r <= 32 &&
    Number.isInteger(p.p) && p.p >= 1 && p.p <= 16 &&
    128 * p.N * p.r + 128 * p.r * p.p <= MAX_MEMORY
  );
}

async function derive(password: string, salt: Uint8Array, p: ScryptParams): Promise<Uint8Array> {
  return scryptAsync(password, salt, { N: p.N, r: p.r, p: p.p, dkLen: KEY_BYTES, maxmem: MAX_MEMORY + 1024 * 1024 });
}

interface ParsedHash {
  params: ScryptParams;
  salt: Uint8Array;
  key: Uint8Array;
}

function parseHash(encoded: string): ParsedHash | undefined {
  const parts = encoded.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return undefined;
  const [N, r, p] = parts.slice(1, 4).map((x) => (/^[0-9]{1,8}$/.test(x ?? "") ? Number(x) : NaN));
  const params = { N: N ?? NaN, r: r ?? NaN, p: p ?? NaN };
  if (!acceptable(params)) return undefined;
  const salt = fromBase64(parts[4] ?? "");
  const key = fromBase64(parts[5] ?? "");
  if (!salt || !key || salt.length < 8 || key.length !== KEY_BYTES) return undefined;
  return { params, salt, key };
}

/** Standard base64, or `undefined` when the stored text is not base64. */
function fromBase64(text: string): Uint8Array | undefined {
  try {
    return fromB64(text);
  } catch {
    return undefined;
  }
}
