/**
 * Basic auth against an htpasswd file, as CNCF Distribution's `htpasswd`
 * access controller does: only bcrypt hashes (`$2y$`, `$2a$`, `$2b$`, what
 * `htpasswd -B` writes) are accepted (a user with another kind is refused,
 * the others still get in), and any valid user gets every action.
 * {@link htpasswdCheck} parses the file's text into a {@link CredentialCheck}
 * (usable by the token service too); {@link createBasicAuthorizer} is the
 * registry's authorizer over such a check. Reading the file (and re-reading
 * it when it changes) is Node's job: `htpasswdCredentials` in
 * `htpasswd.node.ts`.
 *
 * @module
 */
import bcrypt from "bcryptjs";
import { headerValue } from "../../http/header-pairs.js";
import { readsRequestBasics } from "../../runtime/adapter-capabilities.js";
import { silent, type LogHook } from "../../http/log.js";
import type { Authorizer, CredentialCheck, Principal } from "../access.js";
import { errorResponse } from "../../oci/errors.js";
import { quote, unauthorized } from "../verifier/challenge.js";
import { parseBasic } from "./credentials.js";

const BCRYPT = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/;

/** A line of an htpasswd file that was left out: its number and user, never its hash. */
export interface IgnoredHtpasswdLine {
  /** The line number, from 1. */
  line: number;
  /** The user it names. */
  user: string;
}

/**
 * Parse the text of an htpasswd file into user name → bcrypt hash. Blank
 * lines and lines starting with `#` are skipped, as in Distribution. A line
 * whose hash is not bcrypt is left out and passed to `ignored`: as in
 * Distribution 2.8, that user is refused and the others still get in. Throws
 * an `Error` naming the line number (never the line's text or hash) for a
 * line without `:` (Distribution refuses such a file too), an empty user
 * name or a repeated user.
 */
export function parseHtpasswd(text: string, ignored: (line: IgnoredHtpasswdLine) => void = () => {}): Map<string, string> {
  const users = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "" || line.startsWith("#")) continue;
    const at = `htpasswd line ${i + 1}`;
    const colon = line.indexOf(":");
    if (colon <= 0) throw new Error(`${at}: expected "user:hash"`);
    const name = line.slice(0, colon);
    const hash = line.slice(colon + 1);
    if (users.has(name)) throw new Error(`${at}: user "${name}" appears twice`);
    if (!BCRYPT.test(hash)) {
      ignored({ line: i + 1, user: name });
      continue;
    }
    users.set(name, hash);
  }
  return users;
}

/** A {@link CredentialCheck} over htpasswd users, with the lookup the token service uses for refresh tokens. */
export interface HtpasswdCheck extends CredentialCheck {
  /** The principal of the user named `name`, or `undefined`; no password is checked. */
  lookupUser(name: string): Promise<Principal | undefined>;
}

/**
 * A {@link CredentialCheck} over the text of an htpasswd file of bcrypt
 * hashes (parsed by `parseHtpasswd`, which throws for a malformed file).
 * Principals are named by the user and are not administrators. An unknown
 * user costs one bcrypt comparison like a known one, so timing does not tell
 * which names exist. A line whose hash is not bcrypt is left out (its user is
 * refused) with one `warn` event on `log`, naming the line and user.
 *
 * @example htpasswdCheck(await readFile("/etc/docker/registry/htpasswd", "utf8"))
 */
export function htpasswdCheck(text: string, log: LogHook = silent): HtpasswdCheck {
  const users = parseHtpasswd(text, ({ line, user }) => {
    log({ level: "warn", msg: "htpasswd line ignored: the hash is not bcrypt ($2y$, $2a$ or $2b$, as \"htpasswd -B\" writes); the user is refused", line, user });
  });
  const dummy = users.values().next().value;
  const check = async (username: string, password: string): Promise<Principal | undefined> => {
    const hash = users.get(username);
    if (hash === undefined && dummy === undefined) return undefined;
    const matches = await bcrypt.compare(password, hash ?? dummy!);
    return hash !== undefined && matches ? { name: username, admin: false } : undefined;
  };
  const lookupUser = async (name: string): Promise<Principal | undefined> =>
    users.has(name) ? { name, admin: false } : undefined;
  return Object.assign(check, { lookupUser });
}

/** Options of {@link createBasicAuthorizer}. */
export interface BasicAuthorizerOptions {
  /** The `realm` of the `Www-Authenticate: Basic` challenge. */
  realm: string;
  /** Checks the user name and password of `Authorization: Basic`, e.g. {@link htpasswdCheck}. */
  check: CredentialCheck;
  /** Where refusals and failures of `check` are logged. Default: nowhere. */
  log?: LogHook;
}

/**
 * The registry's authorizer for Basic auth, as Distribution's htpasswd access
 * controller: a request with valid credentials gets every action; one without
 * or with wrong ones gets 401 with `Www-Authenticate: Basic realm="…"` and the
 * OCI `UNAUTHORIZED` body. When `check` throws (an unreadable or malformed
 * htpasswd file, e.g. Debian's default config whose `path` names a directory)
 * the failure is logged and, as Distribution 2.8 answers, the request gets 400
 * without a challenge (retrying other credentials cannot help), here with the
 * OCI `DENIED` body and no detail of the failure.
 */
export function createBasicAuthorizer(options: BasicAuthorizerOptions): Authorizer {
  const { check } = options;
  const log = options.log ?? silent;
  const header = `Basic realm=${quote(options.realm)}`;
  return readsRequestBasics<Authorizer>(async (request, needed) => {
    const creds = parseBasic(headerValue(request, "authorization"));
    if (creds) {
      try {
        if (await check(creds.username, creds.password)) return undefined;
        log({ level: "info", msg: "wrong credentials", user: creds.username, method: request.method, url: request.url });
      } catch (error) {
        log({ level: "error", msg: "credential check failed", user: creds.username, error: String((error as Error)?.message ?? error) });
        return errorResponse("DENIED", "credentials cannot be checked: the registry's credential file is unusable (see its log)", { status: 400, request });
      }
    } else {
      log({ level: "info", msg: "basic credentials required", method: request.method, url: request.url });
    }
    return unauthorized(header, needed, request.method, request);
  });
}
