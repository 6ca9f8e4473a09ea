/**
 * JSON Web Key Sets (RFC 7517 §5): reading a JWKS a verifier trusts
 * (Distribution 3's `auth.token.jwks`, keys found by their `kid`), and
 * publishing a key provider's verification keys as one, so that any JWKS
 * consumer can trust registry-kit's token service.
 *
 * @module
 */
import { algorithmSpec, isJwsAlgorithm, type JwsAlgorithm } from "../jwt/algorithms.js";
import { AuthError } from "../errors.js";
import type { KeyProvider } from "../keys/keys.js";
import { VerificationKey } from "./public-key.js";

/** A JSON Web Key Set: `{"keys": [...]}`. */
export interface JsonWebKeySet {
  /** The keys, each a JWK with at least `kty` and (here) `kid`. */
  keys: Array<JsonWebKey & {
    /** The key id tokens name in their header. */
    kid?: string;
    /** `sig` for a signing key. */
    use?: string;
    /** The JWS algorithm the key signs with. */
    alg?: string;
    [member: string]: unknown;
  }>;
}

/** One trusted key of a JWKS. */
export interface JwksKey {
  /** The JWK's `kid`: a token whose header names it is verified with this key. */
  kid: string;
  /** The public key. */
  key: VerificationKey;
  /** The JWK's `alg`, when it names one: the key then verifies only that algorithm. */
  alg?: JwsAlgorithm;
}

/** The most keys a JWKS may hold; a bigger one is refused (a sign of the wrong file). */
export const MAX_JWKS_KEYS = 256;

/** Private members of RSA, EC and OKP JWKs, and the secret of an `oct` key. */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

interface CheckedJwk {
  kid: string;
  jwk: JsonWebKey;
  alg?: JwsAlgorithm;
}

function refuse(where: string, why: string): never {
  throw new AuthError("invalid_key", `JWKS ${where}: ${why}`);
}

/**
 * Check a JWKS's structure without importing any key: valid JSON, a `keys`
 * array of at most {@link MAX_JWKS_KEYS}, every signing key with a unique
 * string `kid` and a public `kty` of RSA, EC or OKP, no private or secret
 * members, and an `alg` (when given) that is a signature algorithm fitting the
 * key. Keys marked `use: "enc"` cannot verify a signature and are left out.
 * Throws {@link AuthError} (`invalid_key`) naming the key and the reason.
 */
function checkJwks(input: string | JsonWebKeySet): CheckedJwk[] {
  let doc: unknown = input;
  if (typeof input === "string") {
    try {
      doc = JSON.parse(input);
    } catch (e) {
      refuse("file", `not valid JSON (${(e as Error).message})`);
    }
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) refuse("file", 'expected a JSON object {"keys": [...]}');
  const keys = (doc as { keys?: unknown }).keys;
  if (!Array.isArray(keys)) refuse("file", 'has no "keys" array');
  if (keys.length > MAX_JWKS_KEYS) refuse("file", `holds ${keys.length} keys, more than ${MAX_JWKS_KEYS}`);
  const seen = new Set<string>();
  const out: CheckedJwk[] = [];
  keys.forEach((raw: unknown, i: number) => {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) refuse(`key #${i}`, "is not a JSON object");
    const jwk = raw as Record<string, unknown>;
    const where = typeof jwk.kid === "string" ? `key #${i} (kid ${JSON.stringify(jwk.kid)})` : `key #${i}`;
    if (jwk.use === "enc") return;
    if (jwk.use !== undefined && jwk.use !== "sig") refuse(where, `unknown "use" ${JSON.stringify(jwk.use)}`);
    const secret = PRIVATE_MEMBERS.filter((m) => m in jwk);
    if (secret.length > 0) refuse(where, `holds private key material (${secret.join(", ")}); publish only public keys`);
    if (jwk.kty !== "RSA" && jwk.kty !== "EC" && jwk.kty !== "OKP") {
      refuse(where, `kty ${JSON.stringify(jwk.kty)} is not supported (RSA, EC or OKP public keys)`);
    }
    if (typeof jwk.kid !== "string" || jwk.kid === "") refuse(where, 'has no "kid": tokens find their key by kid');
    if (seen.has(jwk.kid)) refuse(where, "the kid appears twice");
    seen.add(jwk.kid);
    let alg: JwsAlgorithm | undefined;
    if (jwk.alg !== undefined) {
      if (!isJwsAlgorithm(jwk.alg) || jwk.alg === "HS256") refuse(where, `alg ${JSON.stringify(jwk.alg)} is not a supported signature algorithm`);
      const spec = algorithmSpec(jwk.alg)!;
      if (spec.family !== jwk.kty || (spec.crv !== undefined && spec.crv !== jwk.crv)) {
        refuse(where, `alg ${jwk.alg} does not fit a key of kty ${String(jwk.kty)}${jwk.crv === undefined ? "" : ` crv ${String(jwk.crv)}`}`);
      }
      alg = jwk.alg;
    }
    out.push({ kid: jwk.kid, jwk: jwk as JsonWebKey, ...(alg ? { alg } : {}) });
  });
  return out;
}

/**
 * Read a JWKS (its JSON text, or the parsed object) into trusted keys. Throws
 * {@link AuthError} (`invalid_key`) for a malformed set, a key without a
 * unique `kid`, a private or symmetric key, an unusable key (an RSA key under
 * 2048 bits, an unknown curve), or an `alg` that does not fit its key.
 * Keys with `use: "enc"` are skipped. An empty set gives `[]`: the caller
 * decides whether other trust (a certificate bundle) makes that acceptable.
 */
export async function parseJwks(input: string | JsonWebKeySet): Promise<JwksKey[]> {
  const checked = checkJwks(input);
  const out: JwksKey[] = [];
  for (const { kid, jwk, alg } of checked) {
    let key: VerificationKey;
    try {
      key = await VerificationKey.fromJwk(jwk);
    } catch (e) {
      refuse(`key (kid ${JSON.stringify(kid)})`, `cannot be used: ${(e as Error).message}`);
    }
    out.push({ kid, key, ...(alg ? { alg } : {}) });
  }
  return out;
}

/** Check a JWKS's structure now (synchronously); {@link parseJwks} does the rest. */
export function assertJwksShape(input: string | JsonWebKeySet): void {
  checkJwks(input);
}

/**
 * The verification keys of `keys` as a JWKS, each with `use: "sig"` and
 * `kid` equal to the `kid` the provider's tokens carry in their header (the
 * libtrust key id), so a JWKS consumer that looks keys up by `kid` (as
 * Distribution 3 does) finds them.
 */
export async function jwksOf(keys: KeyProvider): Promise<JsonWebKeySet> {
  const verification = await keys.verificationKeys();
  return { keys: verification.map((k) => ({ ...k.jwk, kid: k.kid, use: "sig" })) };
}

/**
 * A handler answering `GET`/`HEAD` with {@link jwksOf} `keys` as
 * `application/json` (`jwk-set+json` is not what most consumers ask for),
 * cacheable for `maxAgeSeconds` (default 300); other methods get 405. Mount
 * it where consumers look, e.g. `/.well-known/jwks.json`.
 */
export function createJwksHandler(keys: KeyProvider, options: { maxAgeSeconds?: number } = {}): (request: Request) => Promise<Response> {
  const maxAge = options.maxAgeSeconds ?? 300;
  return async (request) => {
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response(null, { status: 405, headers: { Allow: "GET, HEAD" } });
    }
    const body = JSON.stringify(await jwksOf(keys));
    const headers = { "Content-Type": "application/json", "Cache-Control": `public, max-age=${maxAge}` };
    return new Response(request.method === "HEAD" ? null : body, { status: 200, headers });
  };
}
