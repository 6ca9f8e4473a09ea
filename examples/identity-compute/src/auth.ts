/**
 * The token check in front of the compute and image services, in the role
 * keystonemiddleware plays in a real deployment: read `X-Auth-Token`, ask the
 * identity service about it, and answer 401 (missing, unknown or expired
 * token) in keystone's error shape with a `WWW-Authenticate: Keystone uri=…`
 * header pointing at the identity service.
 *
 * @module
 */
import { AUTH_REQUIRED, keystoneError } from "./errors.js";
import type { TokenRecord } from "./tokens.js";

/**
 * Validates a bearer token: resolves to its record, or `undefined` when the
 * token is unknown, revoked or expired. In one process pass
 * `identity.validateToken`; across processes, a function that calls
 * `GET /v3/auth/tokens` (see {@link remoteTokenValidator}).
 */
export type TokenValidator = (token: string) => Promise<TokenRecord | undefined>;

/** Longest `X-Auth-Token` worth looking up; anything longer is refused outright. */
const MAX_TOKEN_LENGTH = 1024;

/**
 * The caller's token record, or the 401 response to send. `identityUrl`, when
 * given, goes into `WWW-Authenticate: Keystone uri="…"`.
 */
export async function checkToken(
  request: Request,
  validate: TokenValidator,
  identityUrl: string | undefined,
): Promise<{ record: TokenRecord } | { response: Response; reason: string }> {
  const token = request.headers.get("x-auth-token");
  const headers = identityUrl ? { "www-authenticate": `Keystone uri="${identityUrl}"` } : undefined;
  if (!token) return { response: keystoneError(401, AUTH_REQUIRED, headers), reason: "no X-Auth-Token" };
  const record = token.length <= MAX_TOKEN_LENGTH ? await validate(token) : undefined;
  if (!record) {
    return { response: keystoneError(401, AUTH_REQUIRED, headers), reason: "invalid or expired X-Auth-Token" };
  }
  return { record };
}

/** Options of {@link remoteTokenValidator}. */
export interface RemoteTokenValidatorOptions {
  /** The identity API base, ending in `/v3`. */
  identityUrl: string;
  /** A token of the service itself (an administrator's), sent as `X-Auth-Token`. */
  serviceToken: () => Promise<string> | string;
  /** The fetch to use. Default: global `fetch`. */
  fetch?: typeof fetch;
}

/**
 * A {@link TokenValidator} that asks a remote identity service
 * (`GET {identityUrl}/auth/tokens` with `X-Subject-Token`) — how a compute
 * service in another process checks tokens. It does not cache.
 */
export function remoteTokenValidator(options: RemoteTokenValidatorOptions): TokenValidator {
  const doFetch = options.fetch ?? fetch;
  const url = options.identityUrl.replace(/\/+$/, "") + "/auth/tokens?nocatalog";
  return async (token) => {
    const response = await doFetch(url, {
      headers: { "x-auth-token": await options.serviceToken(), "x-subject-token": token, accept: "application/json" },
    });
    if (response.status === 404 || response.status === 401) return undefined;
    if (!response.ok) throw new Error(`identity service answered ${response.status} to a token validation`);
    const body = (await response.json()) as { token: KeystoneTokenBody };
    return fromKeystoneBody(body.token);
  };
}

interface KeystoneTokenBody {
  methods: string[];
  user: TokenRecord["user"];
  project?: TokenRecord["project"];
  roles?: TokenRecord["roles"];
  expires_at: string;
  issued_at: string;
  audit_ids: string[];
}

function fromKeystoneBody(t: KeystoneTokenBody): TokenRecord {
  const roles = t.roles ?? [];
  const record: TokenRecord = {
    methods: t.methods,
    user: { id: t.user.id, name: t.user.name, domain: { id: t.user.domain.id, name: t.user.domain.name } },
    admin: roles.some((r) => r.name === "admin"),
    roles,
    issuedAt: Date.parse(t.issued_at),
    expiresAt: Date.parse(t.expires_at),
    auditIds: t.audit_ids,
  };
  if (t.project) record.project = t.project;
  return record;
}
