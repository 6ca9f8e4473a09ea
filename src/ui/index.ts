/**
 * `registry-kit/ui`: a web page for people, as a fetch handler. Sign in with
 * a registry user; browse the repositories that user may pull, their tags and
 * images (platforms, layers, config, referrers, pull commands); administrators
 * also manage users and delete tags.
 *
 * Server-rendered HTML, a stylesheet and a 400-byte script served by the
 * handler itself (nothing from the internet), a strict Content-Security-Policy,
 * every value escaped, and CSRF tokens on every form. It reads and writes only
 * through the services' own handlers with tokens the access policy grants
 * (see {@link UiBackend}), so it never shows or does more than the user may.
 * Runtime-neutral (Web Crypto, fetch types).
 *
 * The all-in-one server (`registry-kit serve`) mounts it at `/ui/`.
 *
 * @example
 * ```ts
 * import { createUi } from "registry-kit/ui";
 * const ui = createUi({ registry, users: { handler: users, path: "/api/users" }, policy, token, signIn, tags, sessionSecret });
 * // route /ui and everything under it to `ui`
 * ```
 *
 * @module
 */
import type { CredentialCheck, Principal } from "../auth/access.js";
import { bindingClaims, matchesBinding } from "../auth/binding.js";
import { utf8 } from "../util/bytes.js";
import { readAll } from "../util/streams.js";
import { runAction } from "./actions.js";
import { CSS, JS } from "./assets.js";
import type { UiBackend } from "./backend.js";
import { cursorSealer, type CursorSealer } from "./cursor.js";
import { memoryEndedSessions, type EndedSessions } from "./ended-sessions.js";
import { noticeOf } from "./notices.js";
import { html, type Html } from "./html.js";
import { layout, link, signInPage, type Frame } from "./pages.js";
import { newSessionId, sessionSigner, type Session } from "./session.js";
import { imageView, repositoriesView, repositoryView, usersView, ViewError, type TagLister } from "./views.js";

export type { UiBackend, UiUsersApi } from "./backend.js";
export type { TagLister } from "./views.js";
export { memoryEndedSessions, storageEndedSessions, type EndedSessions } from "./ended-sessions.js";

/** Options of {@link createUi}. */
export interface UiOptions extends UiBackend {
  /** Where the page is mounted. Default `/ui`. */
  prefix?: string;
  /** Checks a user name and password at sign-in (e.g. `storeCredentialCheck(store)` of `registry-kit/users`). */
  signIn: CredentialCheck;
  /**
   * The user's current record, by name (e.g. `storeCredentialCheck(store).lookupUser`).
   * Given, every request checks that the signed-in user still exists with the
   * same `uid` and credential version (a password change or a delete ends the
   * session) and takes the administrator flag from it.
   */
  currentUser?: (name: string) => Promise<Principal | undefined>;
  /** The tags of a repository with digest and push time (e.g. `tagDetails(storage, name)` of `registry-kit/registry`). */
  tags: TagLister;
  /** Signs the session cookies and CSRF tokens: at least 32 random bytes, kept secret. */
  sessionSecret: Uint8Array | string;
  /** How long a sign-in lasts, in seconds. Default 8 hours. */
  sessionSeconds?: number;
  /**
   * Where signed-out sessions are remembered until they expire, so that a
   * copy of the cookie stops working at once. Default: this process's memory
   * ({@link memoryEndedSessions}); processes sharing one storage share
   * {@link storageEndedSessions} over it.
   */
  endedSessions?: EndedSessions;
  /** Offer tag deletion (to users the policy lets delete). Default true; set false when the registry's deletes are off. */
  tagDelete?: boolean;
  /** The registry's host in the pull commands shown, e.g. `registry.example.com`. Default: the request's host. */
  registryHost?: string;
}

const COOKIE = "rk_ui_session";
const FORM_LIMIT = 16 * 1024;
const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/** The web page's fetch handler; it answers under `prefix` and 404s elsewhere. */
export function createUi(options: UiOptions): (request: Request) => Promise<Response> {
  const prefix = (options.prefix ?? "/ui").replace(/\/+$/, "");
  const signer = sessionSigner(options.sessionSecret);
  const cursors = cursorSealer(typeof options.sessionSecret === "string" ? utf8(options.sessionSecret) : options.sessionSecret);
  const endedSessions = options.endedSessions ?? memoryEndedSessions();
  const lifetime = options.sessionSeconds ?? 8 * 3600;
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return page(404, "Not found", html`<p>Not found.</p>`, { prefix });
    const path = url.pathname.slice(prefix.length + 1);
    if (path === "assets/app.css") return asset(CSS, "text/css; charset=utf-8");
    if (path === "assets/app.js") return asset(JS, "text/javascript; charset=utf-8");
    const session = await current(await signer.open(cookie(request, COOKIE)));
    const frame: Frame = { prefix, ...(session ? { user: { name: session.name, admin: session.admin }, csrf: await signer.csrfToken(session) } : {}) };
    // Only fixed texts, by code: a link from anyone else cannot put words on the page.
    const notice = noticeOf(url.searchParams.get("msg"), url.searchParams.get("status"));
    if (notice) frame.notice = notice;
    try {
      if (request.method === "POST") return await post(request, url, path, session, frame);
      if (request.method !== "GET" && request.method !== "HEAD") return page(405, "Method not allowed", html`<p>Method not allowed.</p>`, frame, { allow: "GET, HEAD, POST" });
      if (path === "sign-in") return page(200, "Sign in", signInPage(frame, url.searchParams.get("next") ?? undefined), frame);
      if (!session) return redirect(link(frame, "sign-in", { next: url.pathname + url.search }));
      return await view(options, cursors, url, path, principalOf(session), frame);
    } catch (error) {
      if (error instanceof ViewError) return page(error.status, "Not available", html`<p>${error.message}</p>`, frame);
      if (error instanceof TypeError) return page(400, "Bad request", html`<p>${error.message}</p>`, frame);
      throw error;
    }
  };

  /** The session as the user store sees it now, or undefined when it no longer holds (or was signed out). */
  async function current(session: Session | undefined): Promise<Session | undefined> {
    if (!session || (await endedSessions.ended(session.id, session.expires))) return undefined;
    if (!options.currentUser) return session;
    const user = await options.currentUser(session.name);
    if (!user || !matchesBinding({ ...bindingClaims(principalOf(session)) }, user)) return undefined;
    return { ...session, admin: user.admin };
  }

  async function post(request: Request, url: URL, path: string, session: Session | undefined, frame: Frame): Promise<Response> {
    // A form posted from another site is refused before it is read (CSRF, login CSRF).
    const origin = request.headers.get("origin");
    if (origin !== null && origin !== url.origin) return page(403, "Forbidden", html`<p>Cross-site form refused.</p>`, frame);
    if (!(request.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded")) {
      return page(415, "Unsupported", html`<p>Forms only.</p>`, frame);
    }
    const body = request.body ? await readAll(request.body, FORM_LIMIT, () => new RangeError("form too large")).catch(() => undefined) : new Uint8Array(0);
    if (body === undefined) return page(413, "Too large", html`<p>The form is too large.</p>`, frame);
    const form = new URLSearchParams(new TextDecoder().decode(body));
    if (path === "sign-in") return signIn(url, form, frame);
    if (!session || !(await signer.checkCsrf(session, form.get("csrf")))) return page(403, "Forbidden", html`<p>Your session expired or the form is stale; sign in again.</p>`, frame);
    if (path === "sign-out") {
      // Ended here, not only in this browser: a copy of the cookie stops working too.
      await endedSessions.end(session.id, session.expires);
      return redirect(link(frame, "sign-in", { msg: "signed-out" }), sessionCookie(prefix, url, "", 0));
    }
    const result = await runAction(options, principalOf(session), path, form);
    if (!result) return page(404, "Not found", html`<p>Not found.</p>`, frame);
    return redirect(link(frame, result.page, { ...result.query, msg: result.notice, ...(result.status !== undefined ? { status: String(result.status) } : {}) }));
  }

  async function signIn(url: URL, form: URLSearchParams, frame: Frame): Promise<Response> {
    const username = form.get("username") ?? "";
    const principal = username && username.length <= 255 ? await options.signIn(username, form.get("password") ?? "") : undefined;
    if (!principal) {
      const refused: Frame = { ...frame, notice: { text: "Wrong user name or password.", error: true } };
      return page(401, "Sign in", signInPage(refused, form.get("next") ?? undefined), refused);
    }
    const session: Session = {
      name: principal.name, admin: principal.admin, id: newSessionId(), expires: Math.floor(Date.now() / 1000) + lifetime,
      ...(principal.uid !== undefined ? { uid: principal.uid } : {}),
      ...(principal.credentialVersion !== undefined ? { credentialVersion: principal.credentialVersion } : {}),
    };
    const next = form.get("next") ?? "";
    // Only a path of this page: never an open redirect.
    const target = next.startsWith(`${prefix}/`) && !next.startsWith("//") && !next.includes("\\") ? next : `${prefix}/`;
    return redirect(target, sessionCookie(prefix, url, await signer.seal(session), lifetime));
  }
}

/** The page a signed-in user asked for with a GET (or HEAD) at `path`. */
async function view(options: UiOptions, cursors: CursorSealer, url: URL, path: string, principal: Principal, frame: Frame): Promise<Response> {
  const q = (name: string) => url.searchParams.get(name) ?? "";
  if (path === "") {
    const after = q("after") ? await cursors.open(q("after")) : undefined;
    return page(200, "Repositories", await repositoriesView(options, frame, principal, q("q"), after, cursors.seal), frame);
  }
  if (path === "repository") {
    return page(200, q("name"), await repositoryView(options, frame, principal, q("name"), q("sort"), options.tags, options.tagDelete ?? true), frame);
  }
  if (path === "image") {
    const host = options.registryHost ?? url.host;
    return page(200, `${q("name")}:${q("ref")}`, await imageView(options, frame, principal, q("name"), q("ref"), host), frame);
  }
  if (path === "users") return page(200, "Users", await usersView(options, frame, principal), frame);
  return page(404, "Not found", html`<p>Not found.</p>`, frame);
}

/** The session cookie, for the page's own path only; `Secure` over https. An empty value with `maxAge` 0 clears it. */
function sessionCookie(prefix: string, url: URL, value: string, maxAge: number): string {
  return `${COOKIE}=${value}; Path=${prefix}/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${url.protocol === "https:" ? "; Secure" : ""}`;
}

function principalOf(session: Session): Principal {
  return {
    name: session.name, admin: session.admin,
    ...(session.uid !== undefined ? { uid: session.uid } : {}),
    ...(session.credentialVersion !== undefined ? { credentialVersion: session.credentialVersion } : {}),
  };
}

function cookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

function page(status: number, title: string, body: Html, frame: Frame, extra: Record<string, string> = {}): Response {
  return new Response(layout(frame, title, body), { status, headers: { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8", ...extra } });
}

function redirect(location: string, setCookie?: string): Response {
  const headers = new Headers({ ...SECURITY_HEADERS, location });
  if (setCookie) headers.set("set-cookie", setCookie);
  return new Response(null, { status: 303, headers });
}

function asset(text: string, type: string): Response {
  return new Response(text, { headers: { ...SECURITY_HEADERS, "content-type": type, "cache-control": "public, max-age=3600" } });
}

