/**
 * The identity service of the example: a small, keystone-compatible subset of
 * the Identity API v3, enough for keystoneauth1 (and so the `openstack`
 * client) to authenticate with a password and find services in the catalog.
 *
 * Routes, below the service root (`root`, default `/`):
 *
 * | Route | What |
 * |---|---|
 * | `GET /` | 300 Multiple Choices: `{"versions":{"values":[…]}}` |
 * | `GET /v3` | the version document `{"version":{"id":"v3.14",…}}` |
 * | `POST /v3/auth/tokens` | authenticate (`password`, or `token` to rescope); token in `X-Subject-Token`, 201 |
 * | `GET`/`HEAD /v3/auth/tokens` | validate the token in `X-Subject-Token` (caller's token in `X-Auth-Token`) |
 * | `DELETE /v3/auth/tokens` | revoke the token in `X-Subject-Token`, 204 |
 * | `GET /v3/auth/catalog` | the catalog of the caller's project-scoped token |
 * | `GET /v3/auth/projects` | the projects the caller may scope to |
 * | `GET /v3/services[/{id}]`, `GET /v3/endpoints[/{id}]` | the catalog as keystone's service and endpoint resources |
 *
 * A token without a project scope (the request body had no `auth.scope`)
 * carries no roles and no catalog: the compute service refuses it with 403.
 *
 * @module
 */
import type { CredentialCheck } from "registry-kit/auth";
import { BodyTooLargeError, readLimitedText } from "./http.js";
import type { LogHook } from "registry-kit";
import { silent } from "./http.js";
import { json } from "./http.js";
import { tokenCatalog, type Catalog } from "./catalog.js";
import { AUTH_REQUIRED, keystoneError } from "./errors.js";
import { memoryTokenStore, type DomainRef, type ProjectRef, type RoleRef, type TokenRecord, type TokenStore } from "./tokens.js";
import { baseUrl, keystoneTime, normaliseRoot, pathBelow, randomString, stableId, type Handler } from "./util.js";
import { identityVersionResponse, identityVersionsResponse } from "./versions.js";

/** A project users can scope their tokens to. */
export interface ProjectDefinition {
  /** Default: a stable id derived from the domain and the name. */
  id?: string;
  name: string;
  /** User names allowed to scope to the project, or `"*"` for every authenticated user. Default `"*"`. */
  members?: readonly string[] | "*";
  /** Roles a member gets on the project. Default `["member", "reader"]`; administrators also get `admin`. */
  roles?: readonly string[];
}

/** Options of {@link createIdentityService}. */
export interface IdentityServiceOptions {
  /** Checks user name and password; plug in `storeCredentialCheck(store)` from the user store. */
  checkCredentials: CredentialCheck;
  /** The service catalog put into project-scoped tokens, or a function giving it (read on every token). */
  catalog: Catalog | (() => Catalog);
  /** Token lifetime in seconds. Default 3600. */
  tokenTtlSeconds?: number;
  /** The projects. Default: one project `demo` open to every authenticated user. */
  projects?: readonly ProjectDefinition[];
  /** Where tokens live. Default: a fresh {@link memoryTokenStore}. */
  tokens?: TokenStore;
  /** The single domain users and projects live in. Default `{ id: "default", name: "Default" }`. */
  domain?: DomainRef;
  /** Path the service is mounted at; the API is at `${root}/v3`. Default `/`. */
  root?: string;
  /** Absolute URL of the service root for version documents (default: the request's origin + `root`). */
  publicUrl?: string;
  /** Largest accepted request body, in bytes. Default 16 KiB. */
  maxBodyBytes?: number;
  /** Structured log; never given passwords or token strings. */
  log?: LogHook;
  /** The clock, in milliseconds (for tests). Default `Date.now`. */
  now?: () => number;
}

/** The identity handler, which also validates tokens for services in the same process. */
export interface IdentityService extends Handler {
  /** The record of a live token, or `undefined`; what {@link createComputeService} needs as `validateToken`. */
  validateToken(token: string): Promise<TokenRecord | undefined>;
  /** The token store in use. */
  readonly tokens: TokenStore;
}

/** Thrown inside the handler to answer with a keystone error. */
class IdentityError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** What goes to the log, when it differs from what the client is told. */
    readonly reason?: string,
  ) {
    super(message);
  }
}

const DEFAULT_DOMAIN: DomainRef = { id: "default", name: "Default" };
const MAX_STRING = 255;

/** A role reference with a stable id. */
function role(name: string): RoleRef {
  return { id: stableId("role", name), name };
}

interface Project {
  ref: ProjectRef;
  members: ReadonlySet<string> | "*";
  roles: readonly string[];
}

/**
 * Create the identity service.
 *
 * @example
 * const identity = createIdentityService({
 *   checkCredentials: storeCredentialCheck(users),
 *   catalog: defineCatalog("RegionOne", [...]),
 *   tokenTtlSeconds: 3600,
 * });
 * const compute = createComputeService({ validateToken: identity.validateToken, servers });
 */
export function createIdentityService(options: IdentityServiceOptions): IdentityService {
  const ttl = options.tokenTtlSeconds ?? 3600;
  if (!Number.isFinite(ttl) || ttl <= 0) throw new RangeError("tokenTtlSeconds must be a positive number");
  const maxBody = options.maxBodyBytes ?? 16 * 1024;
  const domain = options.domain ?? DEFAULT_DOMAIN;
  const root = normaliseRoot(options.root);
  const now = options.now ?? Date.now;
  const tokens = options.tokens ?? memoryTokenStore({ now });
  const log = options.log ?? silent;
  const catalog = typeof options.catalog === "function" ? options.catalog : () => options.catalog as Catalog;

  const projects: Project[] = (options.projects ?? [{ name: "demo" }]).map((p) => {
    if (!p.name) throw new TypeError("every project needs a name");
    return {
      ref: { id: p.id ?? stableId("project", domain.id, p.name), name: p.name, domain: { ...domain } },
      members: p.members === undefined || p.members === "*" ? "*" : new Set(p.members),
      roles: p.roles ?? ["member", "reader"],
    };
  });

  const isMember = (p: Project, user: string) => p.members === "*" || p.members.has(user);

  async function validateToken(token: string): Promise<TokenRecord | undefined> {
    return tokens.get(token);
  }

  /** Resolve `auth.scope` to a project the user may use, or throw. */
  function resolveScope(scope: unknown, userName: string): Project | undefined {
    if (scope === undefined || scope === null || scope === "unscoped") return undefined;
    if (!isObject(scope)) throw new IdentityError(400, "auth.scope must be an object");
    if (!("project" in scope)) {
      throw new IdentityError(400, "Only project scope is supported (auth.scope.project)");
    }
    const ps = scope.project;
    if (!isObject(ps)) throw new IdentityError(400, "auth.scope.project must be an object");
    let found: Project | undefined;
    if (ps.id !== undefined) {
      const id = str(ps.id, "auth.scope.project.id");
      found = projects.find((p) => p.ref.id === id);
    } else {
      const name = str(ps.name, "auth.scope.project.name");
      if (!isObject(ps.domain)) throw new IdentityError(400, "auth.scope.project.domain is required with a project name");
      if (!domainMatches(ps.domain, "auth.scope.project.domain")) found = undefined;
      else found = projects.find((p) => p.ref.name === name);
    }
    // Keystone answers 401 both for an unknown project and for one the user has no role on.
    if (!found || !isMember(found, userName)) {
      throw new IdentityError(401, AUTH_REQUIRED, "no access to the requested project");
    }
    return found;
  }

  function domainMatches(d: Record<string, unknown>, field: string): boolean {
    if (d.id !== undefined) return str(d.id, `${field}.id`) === domain.id;
    return str(d.name, `${field}.name`) === domain.name;
  }

  async function authenticate(request: Request): Promise<Response> {
    const type = request.headers.get("content-type");
    if (type !== null && !/^application\/([\w.+-]*\+)?json\b/i.test(type.trim())) {
      throw new IdentityError(415, "Content-Type must be application/json");
    }
    let text: string;
    try {
      text = await readLimitedText(request, maxBody);
    } catch (e) {
      if (e instanceof BodyTooLargeError) throw new IdentityError(413, `Request body exceeds ${maxBody} bytes`);
      throw e;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new IdentityError(400, "Expecting to find valid JSON in request body");
    }
    if (!isObject(body) || !isObject(body.auth)) throw new IdentityError(400, "'auth' is a required property");
    const auth = body.auth;
    if (!isObject(auth.identity)) throw new IdentityError(400, "'identity' is a required property");
    const identity = auth.identity;
    const methods = identity.methods;
    if (!Array.isArray(methods) || methods.length === 0 || !methods.every((m) => typeof m === "string")) {
      throw new IdentityError(400, "auth.identity.methods must be a non-empty array of strings");
    }
    const wanted = new Set(methods as string[]);
    for (const m of wanted) {
      if (m !== "password" && m !== "token") {
        throw new IdentityError(401, "Attempted to authenticate with an unsupported method.", `unsupported method ${m}`);
      }
    }
    if (wanted.size !== 1) throw new IdentityError(400, "Use exactly one method: password or token");

    const t = now();
    let user: TokenRecord["user"];
    let admin: boolean;
    let resultMethods: string[];
    let auditIds: string[];
    if (wanted.has("password")) {
      if (!isObject(identity.password) || !isObject(identity.password.user)) {
        throw new IdentityError(400, "auth.identity.password.user is required");
      }
      const u = identity.password.user;
      if (u.name === undefined) {
        throw new IdentityError(400, "auth.identity.password.user.name is required (this service identifies users by name and domain)");
      }
      const name = str(u.name, "auth.identity.password.user.name");
      const password = str(u.password, "auth.identity.password.user.password", 4096);
      if (!isObject(u.domain)) throw new IdentityError(400, "auth.identity.password.user.domain is required");
      const inDomain = domainMatches(u.domain, "auth.identity.password.user.domain");
      // Check the password even for a foreign domain, so both failures take the same time.
      const principal = await options.checkCredentials(name, password);
      if (!principal || !inDomain) {
        throw new IdentityError(401, AUTH_REQUIRED, `authentication failed for user ${JSON.stringify(name)}`);
      }
      user = {
        id: principal.id !== undefined ? String(principal.id) : stableId("user", domain.id, principal.name),
        name: principal.name,
        domain: { ...domain },
      };
      admin = principal.admin;
      resultMethods = ["password"];
      auditIds = [randomString(16)];
    } else {
      if (!isObject(identity.token)) throw new IdentityError(400, "auth.identity.token is required");
      const id = str(identity.token.id, "auth.identity.token.id", 1024);
      const old = await tokens.get(id);
      if (!old) throw new IdentityError(401, AUTH_REQUIRED, "rescoping with an invalid token");
      user = old.user;
      admin = old.admin;
      resultMethods = [...new Set(["token", ...old.methods])];
      // A rescoped token keeps the original's expiry, as keystone does.
      auditIds = [randomString(16), old.auditIds[0]!];
      const project = resolveScope(auth.scope, user.name);
      return issue({ user, admin, methods: resultMethods, auditIds, project, issuedAt: t, expiresAt: old.expiresAt }, request);
    }
    const project = resolveScope(auth.scope, user.name);
    return issue({ user, admin, methods: resultMethods, auditIds, project, issuedAt: t, expiresAt: t + ttl * 1000 }, request);
  }

  async function issue(
    r: Omit<TokenRecord, "roles" | "project"> & { project: Project | undefined },
    request: Request,
  ): Promise<Response> {
    const record: TokenRecord = { ...r, project: r.project?.ref, roles: [] };
    if (!r.project) delete record.project;
    if (r.project) {
      const names = [...r.project.roles];
      if (r.admin && !names.includes("admin")) names.push("admin");
      record.roles = names.map(role);
    }
    const token = await tokens.issue(record);
    log({
      level: "info",
      msg: "token issued",
      user: record.user.name,
      project: record.project?.name,
      methods: record.methods,
      audit_id: record.auditIds[0],
    });
    const withCatalog = !new URL(request.url).searchParams.has("nocatalog");
    return json(tokenBody(record, withCatalog), 201, tokenHeaders(token));
  }

  function tokenBody(r: TokenRecord, withCatalog: boolean) {
    const token: Record<string, unknown> = {
      methods: r.methods,
      user: { ...r.user, password_expires_at: null },
      audit_ids: r.auditIds,
      expires_at: keystoneTime(r.expiresAt),
      issued_at: keystoneTime(r.issuedAt),
    };
    if (r.project) {
      token.project = r.project;
      token.is_domain = false;
      token.roles = r.roles;
      if (withCatalog) token.catalog = tokenCatalog(catalog());
    }
    return { token };
  }

  /** The caller's token (`X-Auth-Token`), or a 401. */
  async function caller(request: Request): Promise<TokenRecord> {
    const t = request.headers.get("x-auth-token");
    const record = t ? await tokens.get(t) : undefined;
    if (!record) throw new IdentityError(401, AUTH_REQUIRED, t ? "invalid or expired X-Auth-Token" : "no X-Auth-Token");
    return record;
  }

  /** The subject token (`X-Subject-Token`) the caller may look at, or an error. */
  async function subject(request: Request, who: TokenRecord): Promise<{ token: string; record: TokenRecord }> {
    const token = request.headers.get("x-subject-token");
    if (!token) throw new IdentityError(400, "The X-Subject-Token header is required");
    const record = await tokens.get(token);
    if (!record) throw new IdentityError(404, "Could not find token.", "subject token unknown, revoked or expired");
    // Keystone's default policy: an administrator, or the owner of the token.
    if (!who.admin && who.user.id !== record.user.id) {
      throw new IdentityError(403, "You are not authorized to perform the requested action.", "validating another user's token");
    }
    return { token, record };
  }

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = pathBelow(url, root);
    if (path === undefined) return keystoneError(404, "The resource could not be found.");
    const base = baseUrl(request, root, options.publicUrl);
    const m = request.method;
    const read = m === "GET" || m === "HEAD";

    if (path === "/") {
      if (!read) return notAllowed(["GET", "HEAD"]);
      return identityVersionsResponse(base);
    }
    if (path === "/v3") {
      if (!read) return notAllowed(["GET", "HEAD"]);
      return identityVersionResponse(base);
    }
    if (path === "/v3/auth/tokens") {
      if (m === "POST") return authenticate(request);
      if (read || m === "DELETE") {
        const who = await caller(request);
        const { token, record } = await subject(request, who);
        if (m === "DELETE") {
          await tokens.revoke(token);
          log({ level: "info", msg: "token revoked", user: record.user.name, audit_id: record.auditIds[0] });
          return new Response(null, { status: 204 });
        }
        return json(tokenBody(record, !url.searchParams.has("nocatalog")), 200, tokenHeaders(token));
      }
      return notAllowed(["POST", "GET", "HEAD", "DELETE"]);
    }
    if (path === "/v3/auth/catalog") {
      if (!read) return notAllowed(["GET", "HEAD"]);
      const who = await caller(request);
      if (!who.project) throw new IdentityError(403, "A project-scoped token is required to list the catalog.");
      return json({ catalog: tokenCatalog(catalog()), links: { self: `${base}/v3/auth/catalog`, previous: null, next: null } });
    }
    if (path === "/v3/auth/projects") {
      if (!read) return notAllowed(["GET", "HEAD"]);
      const who = await caller(request);
      const list = projects
        .filter((p) => isMember(p, who.user.name))
        .map((p) => ({
          ...p.ref,
          domain_id: p.ref.domain.id,
          enabled: true,
          is_domain: false,
          parent_id: p.ref.domain.id,
          links: { self: `${base}/v3/projects/${p.ref.id}` },
        }));
      return json({ projects: list, links: { self: `${base}/v3/auth/projects`, previous: null, next: null } });
    }
    if (path === "/v3/services" || path.startsWith("/v3/services/") || path === "/v3/endpoints" || path.startsWith("/v3/endpoints/")) {
      if (!read) return notAllowed(["GET", "HEAD"]);
      const who = await caller(request);
      if (!who.project) throw new IdentityError(403, "A project-scoped token is required to read the catalog.");
      return catalogResource(path, url.searchParams, base);
    }
    return keystoneError(404, "The resource could not be found.");
  }

  /**
   * `GET /v3/services[/{id}]` and `GET /v3/endpoints[/{id}]`: the catalog as
   * keystone's admin resources, which `openstack endpoint list` and
   * `openstack service list` read. Disabled entries are included, with `enabled: false`.
   */
  function catalogResource(path: string, q: URLSearchParams, base: string): Response {
    const services = catalog();
    const [, , kind, id] = path.split("/"); // "", "v3", kind, id?
    const self = `${base}/v3/${kind}`;
    const serviceView = (s: Catalog[number]) => ({
      id: s.id,
      type: s.type,
      name: s.name,
      enabled: s.enabled,
      description: "",
      links: { self: `${self}/${s.id}` },
    });
    const endpoints = services.flatMap((s) =>
      s.endpoints.map((e) => ({
        id: e.id,
        interface: e.interface,
        region: e.region,
        region_id: e.region,
        service_id: s.id,
        url: e.url,
        enabled: e.enabled && s.enabled,
        links: { self: `${self}/${e.id}` },
      })),
    );
    const links = { self, previous: null, next: null };
    if (kind === "services") {
      if (id !== undefined) {
        const s = services.find((x) => x.id === id);
        if (!s) throw new IdentityError(404, `Could not find service: ${id.slice(0, 64)}.`);
        return json({ service: serviceView(s) });
      }
      const type = q.get("type");
      const name = q.get("name");
      const list = services.filter((s) => (type === null || s.type === type) && (name === null || s.name === name));
      return json({ services: list.map(serviceView), links });
    }
    if (id !== undefined) {
      const e = endpoints.find((x) => x.id === id);
      if (!e) throw new IdentityError(404, `Could not find endpoint: ${id.slice(0, 64)}.`);
      return json({ endpoint: e });
    }
    const filters = [
      ["interface", "interface"],
      ["service_id", "service_id"],
      ["region_id", "region_id"],
      ["region", "region_id"],
    ] as const;
    let list = endpoints;
    for (const [param, field] of filters) {
      const want = q.get(param);
      if (want !== null) list = list.filter((e) => e[field] === want);
    }
    return json({ endpoints: list, links });
  }

  const handler = async (request: Request): Promise<Response> => {
    try {
      const response = await route(request);
      return request.method === "HEAD" ? new Response(null, { status: response.status, headers: response.headers }) : response;
    } catch (e) {
      if (e instanceof IdentityError) {
        if (e.status === 401 || e.status === 403 || e.status === 404) {
          log({ level: "warn", msg: "identity request refused", status: e.status, reason: e.reason ?? e.message });
        }
        const headers = e.status === 401 ? { "www-authenticate": `Keystone uri="${baseUrl(request, root, options.publicUrl)}/v3"` } : undefined;
        return request.method === "HEAD"
          ? new Response(null, { status: e.status, headers })
          : keystoneError(e.status, e.message, headers);
      }
      log({ level: "error", msg: "identity request failed", error: e instanceof Error ? e.message : String(e) });
      return keystoneError(500, "An unexpected error prevented the server from fulfilling your request.");
    }
  };
  return Object.assign(handler, { validateToken, tokens });
}

function tokenHeaders(token: string): HeadersInit {
  return { "x-subject-token": token, "cache-control": "no-store", vary: "X-Auth-Token" };
}

function notAllowed(allow: string[]): Response {
  return keystoneError(405, "The method is not allowed for the requested URL.", { allow: allow.join(", ") });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A required, bounded, non-empty string field, or a 400 naming the field. */
function str(v: unknown, field: string, max = MAX_STRING): string {
  if (typeof v !== "string" || v.length === 0) throw new IdentityError(400, `${field} must be a non-empty string`);
  if (v.length > max) throw new IdentityError(400, `${field} is longer than ${max} characters`);
  return v;
}
