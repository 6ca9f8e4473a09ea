/**
 * The errors of the auth part: one class, {@link AuthError}, with a `code` a
 * caller can branch on, and its subclass {@link JwtError} for a token that was
 * refused. Messages are for logs, never for the client.
 *
 * @module
 */

/**
 * Why a token was refused ({@link JwtError}).
 *
 * - `malformed_token`: not three base64url parts holding a JSON-object header
 *   with a string `alg` and a JSON-object payload, longer than
 *   `MAX_TOKEN_LENGTH`, or a claim or header member of the wrong type (`exp`
 *   missing or not an integer, `sub` or `kid` not a string, a bad `x5c` or
 *   `crit`).
 * - `unsigned`: the token has no signature, or `alg` is `none`.
 * - `unsupported_critical`: `crit` names an extension this verifier does not
 *   understand (RFC 7515 §4.1.11).
 * - `algorithm_not_allowed`: `alg` is not on the verifier's allow-list, or the
 *   trusted key cannot verify it.
 * - `wrong_issuer`: `iss` is not the configured issuer.
 * - `wrong_audience`: `aud` does not name this service.
 * - `wrong_token_use`: a refresh token where an access token is expected, or
 *   the other way round.
 * - `expired`: `exp` (plus the leeway) has passed.
 * - `not_yet_valid`: `nbf` (minus the leeway) is still ahead.
 * - `unknown_key`: no key to verify with: no `kid` and no `x5c`, a `kid` no
 *   trusted key has, or an `x5c` chain that ends at no trusted authority.
 * - `bad_certificate`: an `x5c` chain that reaches the bundle but cannot be
 *   used: a certificate expired or not yet valid, too long, or a leaf key that
 *   cannot be imported.
 * - `bad_signature`: the signature does not verify with the trusted key.
 */
export type JwtErrorCode =
  | "malformed_token"
  | "unsigned"
  | "unsupported_critical"
  | "algorithm_not_allowed"
  | "wrong_issuer"
  | "wrong_audience"
  | "wrong_token_use"
  | "expired"
  | "not_yet_valid"
  | "unknown_key"
  | "bad_certificate"
  | "bad_signature";

/**
 * Why an auth operation failed: a {@link JwtErrorCode} for a refused token,
 * or one of
 *
 * - `invalid_key`: key material that cannot be used: a PEM, DER or JWK that
 *   does not parse, an encrypted or unsupported key, an RSA key under
 *   `MIN_RSA_BITS`, an algorithm that does not fit the key, a certificate that
 *   does not match its key, a bundle with no certificate, or an HS256 secret
 *   that is short or a PEM.
 * - `config`: a required option is missing (issuer, audience, realm, service,
 *   keys, a trust source), or the algorithm allow-list names an unknown
 *   algorithm.
 */
export type AuthErrorCode = JwtErrorCode | "invalid_key" | "config";

/**
 * The one error type of `registry-kit/auth`: configuration and key material
 * refused at construction, and (as {@link JwtError}) tokens refused at
 * verification.
 */
export class AuthError extends Error {
  /** `"AuthError"`, or `"JwtError"` for the subclass. */
  override readonly name: string = "AuthError";
  constructor(
    /** Why it failed. */
    readonly code: AuthErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A token was refused. The message is the reason, for logs only, never for the client. */
export class JwtError extends AuthError {
  /** Always `"JwtError"`. */
  override readonly name: string = "JwtError";
  /** Why the token was refused. */
  declare readonly code: JwtErrorCode;
  constructor(code: JwtErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
