/**
 * The vocabulary shared by the registry, the token service and the access
 * policy: what a request needs, who is asking, and how a caller is checked.
 *
 * @module
 */
import { readsRequestBasics } from "../runtime/adapter-capabilities.js";

/**
 * One resource and the actions wanted on (or granted for) it, as in the
 * Distribution scope grammar `type:name:action,action`.
 * Examples: `{ type: "repository", name: "library/alpine", actions: ["pull"] }`,
 * `{ type: "registry", name: "catalog", actions: ["*"] }`.
 */
export interface Access {
  /** The resource type: `repository`, `registry`, … */
  type: string;
  /** The resource name: a repository name, or `catalog` for the registry type. */
  name: string;
  /** Actions such as `pull`, `push`, `delete`, or `*` for all. */
  actions: string[];
}

/** An authenticated caller. Anonymous callers are represented by `undefined`. */
export interface Principal {
  /** The user name; it becomes the token's `sub`. */
  name: string;
  /** System administrators get every right from the default access policy. */
  admin: boolean;
  /** The numeric user id when the caller comes from the user store. */
  id?: number;
  /**
   * An identifier that never changes for this user and is never given to
   * another (the user store's `uid`). The token service binds refresh tokens
   * and access tokens to it (claim `uid`), see `bindingClaims`.
   */
  uid?: string;
  /**
   * The user's credential version (the user store's `credentialVersion`):
   * changes whenever tokens issued before must stop working (claim
   * `cred_ver`). Taken as 0 when `uid` is set and this is not.
   */
  credentialVersion?: number;
}

/**
 * Checks a user name and password (from `Authorization: Basic`). Resolves to
 * the principal, or `undefined` when the credentials are wrong. Must not throw
 * for wrong credentials, and should take the same time whether or not the user exists.
 */
export type CredentialCheck = (username: string, password: string) => Promise<Principal | undefined>;

/**
 * The authorization step the registry runs before every route.
 *
 * It receives the request and the access the route needs (an empty list for
 * `GET /v2/`, which still requires an authenticated caller when auth is on).
 * It resolves to `undefined` to let the request through, or to the `Response`
 * to send instead (for token auth: a 401 with a `Www-Authenticate` challenge).
 */
export type Authorizer = (request: Request, needed: Access[]) => Promise<Response | undefined>;

/** The default authorizer: lets everything through. */
export const allowAll: Authorizer = readsRequestBasics(async () => undefined);
