/**
 * Shared pieces of the property-based tests: run counts, per-request
 * timeouts, the error-body checks of each service, and input generators.
 *
 * Short profile (default, part of `npm test`): {@link RUNS} runs per property.
 * Long profile: `FUZZ_RUNS=100000 npx vitest run test/fuzz`.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { ERROR_STATUS, type ErrorCode } from "../../src/oci/errors.js";
import { USER_ERROR_STATUS } from "../../src/users/errors.js";
import type { StorageDriver } from "../../src/storage/driver.js";

/** Runs per property: `FUZZ_RUNS` or 300. */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
/** Runs per stateful (operation sequence) property: an eighth, at least 40. */
export const SEQUENCE_RUNS = Math.max(40, Math.round(RUNS / 8));
/** Vitest timeout for one property: grows with the run count. */
export const PROPERTY_TIMEOUT = Math.max(60_000, RUNS * 40);
/** One request may take this long before the property fails as a hang. */
export const REQUEST_TIMEOUT_MS = 5_000;
/** Fixed seed unless `FUZZ_SEED` is set, so a failure in CI reproduces. */
export const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : undefined;

/** fast-check parameters of every property. */
export function params(numRuns = RUNS): fc.Parameters<unknown> {
  return { numRuns, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true };
}

/** Count of requests sent through any handler, for the report. */
export const counter = { requests: 0 };

/** Call a handler with a timeout; a rejection or a hang fails the property. */
export async function send(handler: (r: Request) => Promise<Response>, request: Request, ms = REQUEST_TIMEOUT_MS): Promise<Response> {
  counter.requests++;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${request.method} ${request.url.slice(0, 200)} took more than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([handler(request), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Read a body with a timeout (a never-ending body is a hang too). */
export async function bodyText(response: Response, ms = REQUEST_TIMEOUT_MS): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("hang while reading the response body")), ms);
  });
  try {
    return await Promise.race([response.text(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Statuses a registry error code may carry besides its standard one:
 * 404/405 for unknown routes and methods (UNSUPPORTED), 413 for a manifest
 * over the size limit (SIZE_INVALID).
 */
export const REGISTRY_EXTRA_STATUS: Partial<Record<ErrorCode, number[]>> = {
  UNSUPPORTED: [404, 405],
  SIZE_INVALID: [413],
};

/** Check one registry response: < 500, the OCI error body on errors, the API-version headers. Returns the body text. */
export async function checkRegistryResponse(response: Response, method: string): Promise<string> {
  const text = await bodyText(response);
  const where = `${method} → ${response.status} ${text.slice(0, 300)}`;
  if (response.status >= 500) throw new Error(`5xx: ${where}`);
  if (response.headers.get("docker-distribution-api-version") !== "registry/2.0") throw new Error(`no API version header: ${where}`);
  if (response.status < 400) return text;
  // HEAD: no body, or the same OCI body a GET gets (adapters drop it on the wire)
  if (method === "HEAD" && text === "") return text;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`error body is not JSON: ${where}`);
  }
  const errors = (body as { errors?: unknown }).errors;
  if (!Array.isArray(errors) || errors.length === 0) throw new Error(`no errors array: ${where}`);
  for (const e of errors as Record<string, unknown>[]) {
    const code = e.code as ErrorCode;
    if (typeof code !== "string" || !(code in ERROR_STATUS)) throw new Error(`unknown code: ${where}`);
    if (typeof e.message !== "string" || !("detail" in e)) throw new Error(`entry shape: ${where}`);
    const allowed = [ERROR_STATUS[code], ...(REGISTRY_EXTRA_STATUS[code] ?? [])];
    if (!allowed.includes(response.status)) throw new Error(`status does not match code ${code}: ${where}`);
  }
  return text;
}

/** The token service's error codes and their statuses. */
export const TOKEN_ERROR_STATUS: Record<string, number[]> = {
  invalid_request: [400, 405, 413],
  invalid_scope: [400],
  unsupported_grant_type: [400],
  invalid_grant: [400],
  unauthorized: [401],
};

/** Check one token-service response: < 500; JSON `{error, details}` on errors; `{token, access_token}` on 200. */
export async function checkTokenResponse(response: Response, method: string): Promise<unknown> {
  const text = await bodyText(response);
  const where = `${method} → ${response.status} ${text.slice(0, 300)}`;
  if (response.status >= 500) throw new Error(`5xx: ${where}`);
  if (method === "HEAD") return undefined;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`body is not JSON: ${where}`);
  }
  if (response.headers.get("cache-control") !== "no-store") throw new Error(`no Cache-Control: no-store: ${where}`);
  if (response.status === 200) {
    if (typeof body.token !== "string" || body.token !== body.access_token) throw new Error(`no token: ${where}`);
    return body;
  }
  if (typeof body.error !== "string" || typeof body.details !== "string") throw new Error(`error shape: ${where}`);
  const allowed = TOKEN_ERROR_STATUS[body.error];
  if (!allowed || !allowed.includes(response.status)) throw new Error(`status does not match error ${body.error}: ${where}`);
  if (response.status === 401 && !/^Basic realm="/.test(response.headers.get("www-authenticate") ?? "")) throw new Error(`401 without a Basic challenge: ${where}`);
  return body;
}

/** Check one management-API response: < 500; `{"errors":[{code,message}]}` on errors with the code's status. */
export async function checkUserResponse(response: Response, method: string): Promise<string> {
  const text = await bodyText(response);
  const where = `${method} → ${response.status} ${text.slice(0, 300)}`;
  if (response.status >= 500) throw new Error(`5xx: ${where}`);
  if (response.status < 400 || method === "HEAD") return text;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`error body is not JSON: ${where}`);
  }
  const errors = (body as { errors?: unknown }).errors;
  if (!Array.isArray(errors) || errors.length !== 1) throw new Error(`errors shape: ${where}`);
  const e = errors[0] as Record<string, unknown>;
  const code = e.code as keyof typeof USER_ERROR_STATUS;
  if (typeof code !== "string" || !(code in USER_ERROR_STATUS) || typeof e.message !== "string") throw new Error(`entry shape: ${where}`);
  if (USER_ERROR_STATUS[code] !== response.status) throw new Error(`status does not match code ${code}: ${where}`);
  return text;
}

// ---------------------------------------------------------------- generators

const HEX = "0123456789abcdef";
export const hex = (n: number) => fc.string({ unit: fc.constantFrom(...HEX), minLength: n, maxLength: n });

/** Digests: valid sha256/sha512, wrong lengths, upper case, other algorithms, junk. */
export const digestArb = fc.oneof(
  hex(64).map((h) => `sha256:${h}`),
  hex(128).map((h) => `sha512:${h}`),
  hex(64).map((h) => `sha256:${h.toUpperCase()}`),
  fc.nat({ max: 140 }).chain((n) => hex(n)).map((h) => `sha256:${h}`),
  hex(64).map((h) => `md5:${h.slice(0, 32)}`),
  hex(64).map((h) => `sha384:${h}${h.slice(0, 32)}`),
  hex(64).map((h) => `blake3:${h}`),
  fc.constantFrom("sha256:", ":", "sha256", "", "sha256:..", "sha256:../../etc/passwd", "sha256:%2e%2e", "sha256:\u0000"),
  fc.string({ maxLength: 80 }),
);

/** Path segments that are hard on parsers. */
export const nastySegment = fc.oneof(
  fc.constantFrom(
    "..", ".", "", "%2e%2e", "%2E%2E", "..%2f", "%2f", "%00", "\u0000", "%0d%0a", "\r\n", "\u2028", "\u2029", "~tmp", "_uploads",
    "_layers", "_manifests", "..\\..", "\\", "a\u0000b", "A", "a..b", "a__b", "a---b", "-a", "a-", "_catalog", "%252e%252e",
  ),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.nat({ max: 600 }).map((n) => "a".repeat(n)),
);

/** Valid repository names (short, so they collide with the seeded ones). */
export const validName = fc.oneof(
  fc.constantFrom("lib/app", "lib/other", "app", "a/b/c", "x"),
  fc.array(fc.stringMatching(/^[a-z0-9]{1,6}(?:[._-][a-z0-9]{1,4})?$/), { minLength: 1, maxLength: 4 }).map((p) => p.join("/")),
);

/** Repository names: valid, seeded, or junk. */
export const nameArb = fc.oneof(
  { weight: 3, arbitrary: validName },
  { weight: 2, arbitrary: fc.array(nastySegment, { minLength: 1, maxLength: 4 }).map((p) => p.join("/")) },
  { weight: 1, arbitrary: fc.nat({ max: 300 }).map((n) => `a/${"b".repeat(n)}`) },
);

/** Tags: valid, seeded, over-long, junk. */
export const tagArb = fc.oneof(
  fc.constantFrom("v1", "latest", "v2", "x".repeat(128), "x".repeat(129)),
  fc.stringMatching(/^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,20}$/),
  nastySegment,
);

/** A query-string value with hostile content. */
export const queryValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom("0", "1", "-1", "1000", "1001", "99999999999999999999", "1e3", "0x10", " 1", "NaN", "", "%", "\r\n", "../.."),
  fc.nat({ max: 2000 }).map(String),
  nastySegment,
);

/** Request header values, including garbage that the Headers class still accepts. */
export const headerValue = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => s.replace(/[\r\n\u0000]/g, "").trim()),
  fc.constantFrom("bytes=0-0", "bytes=-1", "bytes=0-", "bytes=5-2", "bytes=0-99999999999999999999", "bytes=1-2,3-4", "0-0", "0-", "1-0", "bytes 0-9/*", "*/*", "application/json", "text/plain"),
  fc.nat({ max: 20_000 }).map((n) => "x".repeat(n)),
);

/** Bodies: empty, random bytes, JSON-ish garbage, deep nesting, large. */
export const bodyArb: fc.Arbitrary<Uint8Array<ArrayBuffer> | string | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.uint8Array({ maxLength: 256 }).map((b) => new Uint8Array(b)),
  fc.json({ maxDepth: 4 }),
  fc.string({ maxLength: 200 }),
  fc.nat({ max: 5000 }).map((d) => "[".repeat(d) + "]".repeat(d)),
  fc.nat({ max: 5000 }).map((d) => '{"a":'.repeat(d) + "1" + "}".repeat(d)),
  fc.constantFrom("{", "null", "[]", '{"schemaVersion":2}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}'),
  fc.nat({ max: 3 }).map((n) => new Uint8Array(n * 1024 * 1024 + 1)),
);

/** Random HTTP method names (the Request constructor rejects some; those are skipped). */
export const methodArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("GET", "HEAD", "PUT", "POST", "PATCH", "DELETE") },
  { weight: 1, arbitrary: fc.constantFrom("OPTIONS", "get", "put", "PROPFIND", "FOO", "TRACE") },
);

/** Build a Request, or `undefined` when the WHATWG Request/Headers classes refuse the input (not the handler's concern). */
export function tryRequest(url: string, method: string, headers: [string, string][], body: Uint8Array<ArrayBuffer> | string | undefined): Request | undefined {
  try {
    const h = new Headers();
    for (const [k, v] of headers) h.append(k, v);
    const withBody = body !== undefined && method !== "GET" && method !== "HEAD";
    return new Request(url, { method, headers: h, ...(withBody ? { body } : {}) });
  } catch {
    return undefined;
  }
}

/** Mutate a string: flip, drop, duplicate, truncate or insert a character. */
export const mutation = fc.tuple(fc.constantFrom("flip", "drop", "dup", "truncate", "insert", "swapcase"), fc.nat(), fc.string({ minLength: 1, maxLength: 3 }));
export function mutate(value: string, [kind, at, extra]: [string, number, string]): string {
  if (value.length === 0) return extra;
  const i = at % value.length;
  const c = value[i]!;
  switch (kind) {
    case "flip":
      return value.slice(0, i) + String.fromCharCode(c.charCodeAt(0) ^ 1) + value.slice(i + 1);
    case "drop":
      return value.slice(0, i) + value.slice(i + 1);
    case "dup":
      return value.slice(0, i) + c + value.slice(i);
    case "truncate":
      return value.slice(0, i);
    case "insert":
      return value.slice(0, i) + extra + value.slice(i);
    default:
      return value.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + value.slice(i + 1);
  }
}

/** Walk `blobs/` and check every object hashes to the digest in its key. Returns how many were checked. */
export async function verifyAllBlobs(storage: StorageDriver): Promise<number> {
  let after: string | undefined;
  let checked = 0;
  for (;;) {
    const page = await storage.list("blobs", after === undefined ? { limit: 1000 } : { after, limit: 1000 });
    for (const key of page.keys) {
      const [, alg, , hexKey] = key.split("/");
      const stream = await storage.read(key);
      if (!stream) continue; // deleted meanwhile
      const hash = createHash(alg!);
      for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
      const got = hash.digest("hex");
      if (got !== hexKey) throw new Error(`${key} holds bytes of ${alg}:${got}`);
      checked++;
    }
    const last = page.keys.at(-1);
    if (!page.truncated || last === undefined) return checked;
    after = last;
  }
}

