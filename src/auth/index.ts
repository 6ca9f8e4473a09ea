/**
 * Token authentication: the registry's token authorizer, the token service
 * (the realm), token verification for other services, key providers, the
 * access policy, and the few JWT, key-id and scope helpers an integration
 * needs. Every error thrown here is an {@link AuthError}.
 *
 * Node-only file loaders (`pemKeysFromFiles`, `loadTrustStore`) are in
 * `registry-kit/node`. The parsers and checks behind these functions (PEM,
 * DER, `x5c` chains, the OAuth2 form), the registry's 401 challenge, the
 * access index and the size limits are not public.
 *
 * @module
 */
// The access vocabulary shared with the registry and users services.
export type { Access, Authorizer, CredentialCheck, Principal } from "./access.js";
export { bindingClaims, matchesBinding } from "./binding.js";
export type { BindingClaims } from "./binding.js";

// Errors.
export { AuthError, JwtError } from "./errors.js";
export type { AuthErrorCode, JwtErrorCode } from "./errors.js";

// The registry's authorizer, and verification for other services.
export { DEFAULT_AUTO_REDIRECT_PATH, createTokenAuthorizer, createTokenVerifier, verifiedTokenOf, verifyToken } from "./verifier/verifier.js";
export type { TokenAuthorizerOptions, TokenVerifier, TokenVerifierOptions, TrustOptions, VerifiedToken } from "./verifier/verifier.js";
export { DEFAULT_ALGORITHMS } from "./jwt/algorithms.js";
export type { JwsAlgorithm } from "./jwt/algorithms.js";
export { parseCertBundle, trustStoreFromKeys } from "./trust/cert-bundle.js";
export { createJwksHandler, jwksOf, parseJwks } from "./trust/jwks.js";
export type { JsonWebKeySet, JwksKey } from "./trust/jwks.js";
export type { TrustStore } from "./trust/cert-bundle.js";
export { covers, formatScope, parseScope } from "./scope.js";
export type { AccessIndex } from "./scope.js";

// The token service (the realm) and what it is built from.
export { createTokenService } from "./token-service/token-service.js";
export type { TokenResponseBody, TokenServiceOptions } from "./token-service/token-service.js";
export { aclPolicy, defaultPolicy, defaultRules } from "./token-service/policy.js";
export type { AccessPolicy, AclMatch, AclRule, DefaultPolicyOptions } from "./token-service/policy.js";
export { memoryCredentials } from "./basic/credentials.js";
export { createBasicAuthorizer, htpasswdCheck } from "./basic/htpasswd.js";
export type { BasicAuthorizerOptions, HtpasswdCheck } from "./basic/htpasswd.js";
export type { MemoryCredentials, MemoryUser } from "./basic/credentials.js";

// Keys.
export { cryptoKeys, generateSigningKeyPem, generatedKeys, hmacKeys, pemKeys } from "./keys/keys.js";
export type {
  CryptoKeysOptions,
  GenerateKeyOptions,
  GeneratedKeyProvider,
  HmacKeysOptions,
  KeyPem,
  KeyProvider,
  PemKeysOptions,
} from "./keys/keys.js";
export { VerificationKey } from "./trust/public-key.js";
export { jwkThumbprint, libtrustKeyId, libtrustKeyIdOf } from "./keys/kid.js";

// JWTs, for tests and for issuing tokens outside the token service.
export { MAX_TOKEN_LENGTH, decodeJwt, signJwt } from "./jwt/jwt.js";
export type { DecodedJwt, JwtHeader, SignOptions, SigningKey, TokenClaims } from "./jwt/jwt.js";
