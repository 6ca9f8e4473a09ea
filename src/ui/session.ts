/**
 * The web page's sign-in session: a cookie holding who signed in and until
 * when, signed with HMAC-SHA-256 (Web Crypto, so it works in every runtime
 * the core supports), and the CSRF token derived from it.
 *
 * The cookie carries the user's `uid` and credential version: the tokens the
 * page uses on the user's behalf carry them too, so a password change or a
 * deleted user ends the session at the next request (the services refuse the
 * tokens).
 *
 * @module
 */
import { b64url, equalBytes, fromB64url, fromUtf8, toArrayBuffer, utf8 } from "../util/bytes.js";

/** What a session cookie says. */
export interface Session {
  /** The user name. */
  name: string;
  /** Whether the user was an administrator at sign-in (the services check again on every call). */
  admin: boolean;
  /** The user store's `uid`. */
  uid?: string;
  /** The user's credential version at sign-in. */
  credentialVersion?: number;
  /** Random, per sign-in: the CSRF token is derived from it. */
  id: string;
  /** Expiry, in seconds since the epoch. */
  expires: number;
}

/** Signs and checks session cookies and CSRF tokens with one secret. */
export interface SessionSigner {
  /** The cookie value for `session`. */
  seal(session: Session): Promise<string>;
  /** The session in a cookie value, or undefined when it is forged, damaged or expired. */
  open(value: string | undefined): Promise<Session | undefined>;
  /** The CSRF token of a session, for its forms. */
  csrfToken(session: Session): Promise<string>;
  /** Whether `token` is the CSRF token of `session` (compared in constant time). */
  checkCsrf(session: Session, token: string | null): Promise<boolean>;
}

/** A {@link SessionSigner} keyed by `secret` (at least 32 bytes). */
export function sessionSigner(secret: Uint8Array | string): SessionSigner {
  const bytes = typeof secret === "string" ? utf8(secret) : secret;
  if (bytes.byteLength < 32) throw new TypeError("the UI session secret must be at least 32 bytes");
  const key = crypto.subtle.importKey("raw", toArrayBuffer(bytes), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = async (label: string, data: string): Promise<Uint8Array> =>
    new Uint8Array(await crypto.subtle.sign("HMAC", await key, toArrayBuffer(utf8(`${label}\u0000${data}`))));
  return {
    async seal(session) {
      const payload = b64url(utf8(JSON.stringify(session)));
      return `${payload}.${b64url(await mac("session", payload))}`;
    },
    async open(value) {
      if (!value || value.length > 4096) return undefined;
      const [payload, signature, extra] = value.split(".");
      if (!payload || !signature || extra !== undefined) return undefined;
      let given: Uint8Array;
      try {
        given = fromB64url(signature);
      } catch {
        return undefined;
      }
      if (!equalBytes(given, await mac("session", payload))) return undefined;
      let session: Session;
      try {
        session = JSON.parse(fromUtf8(fromB64url(payload))) as Session;
      } catch {
        return undefined;
      }
      if (typeof session.name !== "string" || typeof session.id !== "string" || typeof session.expires !== "number") return undefined;
      return session.expires > Date.now() / 1000 ? session : undefined;
    },
    async csrfToken(session) {
      return b64url(await mac("csrf", session.id));
    },
    async checkCsrf(session, token) {
      if (!token || token.length > 256) return false;
      return equalBytes(utf8(token), utf8(b64url(await mac("csrf", session.id))));
    },
  };
}

/** A random session id. */
export function newSessionId(): string {
  return b64url(crypto.getRandomValues(new Uint8Array(18)));
}
