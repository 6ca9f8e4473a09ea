/**
 * Token authentication: the registry's token authorizer, the token service
 * (the realm), JWT signing and verification, key ids, key providers,
 * certificate bundles, scopes, challenges and the access policy.
 *
 * Node-only file loaders are in `keys.node.ts` (not exported here).
 *
 * @module
 */
export type { Access, Authorizer, CredentialCheck, Principal } from "./access.js";
export { allowAll } from "./access.js";

export { bindingClaims, matchesBinding } from "./binding.js";
export type { BindingClaims } from "./binding.js";

export { DEFAULT_ALGORITHMS, MIN_RSA_BITS, algorithmSpec, allowList, isJwsAlgorithm } from "./algorithms.js";
export type { AlgorithmSpec, JwsAlgorithm, KeyFamily } from "./algorithms.js";

export { jwkThumbprint, libtrustKeyId, libtrustKeyIdOf } from "./kid.js";

export { AuthError, JwtError } from "./errors.js";
export type { AuthErrorCode, JwtErrorCode } from "./errors.js";
export { MAX_TOKEN_LENGTH, decodeJwt, signJwt, verifySignature } from "./jwt.js";
export type { DecodedJwt, JwtHeader, SignOptions, SigningKey, TokenClaims } from "./jwt.js";

export { VerificationKey, publicJwk } from "./public-key.js";
export {
  checkHmacSecret,
  cryptoKeys,
  defaultAlgorithm,
  generateSigningKeyPem,
  generatedKeys,
  hmacKeys,
  pemKeys,
  verificationKeysFromPem,
} from "./keys.js";
export type {
  CryptoKeysOptions,
  GenerateKeyOptions,
  GeneratedKeyProvider,
  HmacKeysOptions,
  KeyPem,
  KeyProvider,
  PemKeysOptions,
} from "./keys.js";
export { parsePem, toPem } from "./pem.js";
export type { PemBlock } from "./pem.js";

export { parseCertBundle, resolveSigningKey, trustStoreFromKeys, verifyX5c } from "./cert-bundle.js";
export type { TrustStore } from "./cert-bundle.js";

export { covers, formatScope, indexAccess, mergeAccess, parseScope, parseScopes } from "./scope.js";
export type { AccessIndex } from "./scope.js";

export { challengeDetail, challengeResponse, formatChallenge } from "./challenge.js";
export type { Challenge, ChallengeError } from "./challenge.js";

export { bearerToken, createTokenAuthorizer, createTokenVerifier, verifiedTokenOf, verifyToken } from "./verifier.js";
export type { TokenAuthorizerOptions, TokenVerifier, TokenVerifierOptions, TrustOptions, VerifiedToken } from "./verifier.js";

export { aclPolicy, compilePattern, defaultPolicy, defaultRules } from "./policy.js";
export type { AccessPolicy, AclMatch, AclRule, DefaultPolicyOptions } from "./policy.js";

export { memoryCredentials, parseBasic } from "./credentials.js";
export type { BasicCredentials, MemoryCredentials, MemoryUser } from "./credentials.js";

export { parseTokenForm, parseTokenQuery } from "./oauth-form.js";
export type { TokenRequest, TokenRequestError } from "./oauth-form.js";

export { createTokenService } from "./token-service.js";
export type { TokenResponseBody, TokenServiceOptions } from "./token-service.js";
