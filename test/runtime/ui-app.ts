/**
 * The web page for the runtime servers (server.ts, worker.ts): `createUi`
 * over the same registry, signing users in against the same credentials,
 * granting by the same rules, calling the registry with tokens signed by the
 * same key. Only the core's parts, so it runs wherever they do.
 */
import { aclPolicy, signJwt, type AclRule, type CredentialCheck, type KeyProvider } from "../../src/auth/index.js";
import { tagDetails } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/index.js";
import { createUi } from "../../src/ui/index.js";

type Handler = (request: Request) => Promise<Response>;

/** The page at `/ui/` for `registry`, whose tokens carry `issuer` and `service`. */
export function uiApp(options: { registry: Handler; storage: StorageDriver; keys: KeyProvider; issuer: string; service: string; signIn: CredentialCheck; rules: AclRule[] }): Handler {
  const { keys, issuer, service } = options;
  return createUi({
    registry: options.registry,
    policy: aclPolicy(options.rules),
    signIn: options.signIn,
    tags: (name) => tagDetails(options.storage, name),
    sessionSecret: crypto.getRandomValues(new Uint8Array(32)),
    async token(principal, _audience, access) {
      const now = Math.floor(Date.now() / 1000);
      return signJwt({ iss: issuer, sub: principal?.name ?? "ui", aud: service, iat: now, nbf: now - 5, exp: now + 60, jti: crypto.randomUUID(), access }, await keys.signingKey(), { x5c: false });
    },
  });
}
