/**
 * An htpasswd file as a `CredentialCheck`, re-read when it changes:
 * on use, at most once per `checkIntervalMs`, the file's mtime, size and
 * inode are compared with those of the last read (no watcher).
 *
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { silent, type LogHook } from "../../http/log.js";
import type { Principal } from "../access.js";
import { htpasswdCheck, type HtpasswdCheck } from "./htpasswd.js";

/** Options of {@link htpasswdCredentials}. */
export interface HtpasswdCredentialsOptions {
  /** The htpasswd file (bcrypt hashes only, as `htpasswd -B` writes). */
  path: string;
  /** How often, at most, the file is checked for changes on use. Default 1000 ms. */
  checkIntervalMs?: number;
  /** Where a line left out (its hash is not bcrypt) is reported, once each time the file is read. Default: nowhere. */
  log?: LogHook;
}

/**
 * A `CredentialCheck` over the htpasswd file at `path` (see
 * `htpasswdCheck`). The file is read on first use and again when its mtime,
 * size or inode have changed, checked at most once per `checkIntervalMs`. A
 * file that cannot be read or parsed makes the check throw (the error names
 * the line, never a hash) until it is fixed; `createBasicAuthorizer` then
 * refuses every credential, as Distribution does. A line whose hash is not
 * bcrypt only refuses its user (a `warn` on `log` when the file is read).
 */
export function htpasswdCredentials(options: HtpasswdCredentialsOptions): HtpasswdCheck {
  const { path } = options;
  const interval = options.checkIntervalMs ?? 1000;
  let current: HtpasswdCheck | undefined;
  let failure: Error | undefined;
  let version = "";
  let checkedAt = -Infinity;
  let pending: Promise<HtpasswdCheck> | undefined;

  const refresh = async (): Promise<HtpasswdCheck> => {
    try {
      const info = await stat(path);
      const seen = `${info.mtimeMs}:${info.size}:${info.ino}`;
      if (seen !== version || !current) {
        const text = await readFile(path, "utf8");
        current = htpasswdCheck(text, options.log ?? silent);
        version = seen;
      }
      failure = undefined;
    } catch (error) {
      const reason = (error as Error)?.message ?? String(error);
      failure = new Error(`htpasswd ${path}: ${reason.startsWith("htpasswd line") ? reason.slice("htpasswd ".length) : reason}`);
      current = undefined;
      version = "";
    }
    if (failure || !current) throw failure;
    return current;
  };

  const load = (): Promise<HtpasswdCheck> => {
    const now = Date.now();
    if (now - checkedAt < interval) {
      if (pending) return pending;
      if (failure) return Promise.reject(failure);
      if (current) return Promise.resolve(current);
    }
    checkedAt = now;
    pending = refresh().finally(() => { pending = undefined; });
    return pending;
  };

  const check = async (username: string, password: string): Promise<Principal | undefined> =>
    (await load())(username, password);
  const lookupUser = async (name: string): Promise<Principal | undefined> => (await load()).lookupUser(name);
  return Object.assign(check, { lookupUser });
}
