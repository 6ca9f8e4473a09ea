/**
 * `registry-kit users list|add|passwd|admin|delete`: the accounts of the user
 * store `registry-kit serve [CONFIG]` uses (same CONFIG, same environment),
 * offline or while the server runs; the way back in when the administrator
 * password is lost. Passwords are read from standard input, never from the
 * command line.
 *
 * @module
 */
import {
  createAccount, deleteAccount, listAccounts, resetPassword, setAdministrator, storageUserStore, UserStoreError, type PublicUser, type UserStore,
} from "../users/index.js";
import { openStorage } from "../server/all-in-one/all-in-one.js";
import type { AllInOneConfig } from "../server/config/config.js";
import { loadCommandConfig } from "./command-support.js";
import { readSecretLine } from "./stdin.js";
import type { CliIo } from "./io.js";

export const USERS_USAGE = `Usage: registry-kit users list [--json] [CONFIG]
       registry-kit users add NAME [--admin] [--email=ADDRESS] [CONFIG]
       registry-kit users passwd NAME [CONFIG]
       registry-kit users admin NAME [--revoke] [CONFIG]
       registry-kit users delete NAME [CONFIG]

Manages the accounts of the user store that \`registry-kit serve [CONFIG]\` uses
(same CONFIG, same environment), also while the server runs: changes apply to
the next request. add and passwd read the password from standard input (the
first line), e.g.  printf '%s\\n' "$PASSWORD" | registry-kit users passwd admin config.yml
passwd resets any account's password, an administrator's too (tokens issued
before stop working). admin grants the administrator role, --revoke takes it
away; the last administrator can be neither revoked nor deleted.`;

interface Parsed {
  action: string;
  name?: string;
  config?: string;
  flags: Set<string>;
  email?: string;
}

const ACTIONS: Record<string, { needsName: boolean; flags: string[] }> = {
  list: { needsName: false, flags: ["--json"] },
  add: { needsName: true, flags: ["--admin"] },
  passwd: { needsName: true, flags: [] },
  admin: { needsName: true, flags: ["--revoke"] },
  delete: { needsName: true, flags: [] },
};

function parse(args: string[]): Parsed | undefined {
  const [action, ...rest] = args;
  const spec = action === undefined ? undefined : ACTIONS[action];
  if (!spec || action === undefined) return undefined;
  const parsed: Parsed = { action, flags: new Set() };
  const positional: string[] = [];
  for (const arg of rest) {
    if (arg.startsWith("--email=") && action === "add") parsed.email = arg.slice("--email=".length);
    else if (spec.flags.includes(arg)) parsed.flags.add(arg);
    else if (arg.startsWith("-")) return undefined;
    else positional.push(arg);
  }
  if (spec.needsName) parsed.name = positional.shift();
  if ((spec.needsName && parsed.name === undefined) || positional.length > 1) return undefined;
  parsed.config = positional[0];
  return parsed;
}

/** Run the `users` command; resolves to the exit code. */
export async function usersCommand(args: string[], io: CliIo): Promise<number> {
  if (args[0] === "--help" || args[0] === "-h" || args[0] === "help") {
    io.out(USERS_USAGE);
    return 0;
  }
  const parsed = parse(args);
  if (!parsed) {
    io.err(USERS_USAGE);
    return 2;
  }
  let config: AllInOneConfig;
  try {
    config = await loadCommandConfig(parsed.config, io);
  } catch (error) {
    io.err(`registry-kit users: configuration error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  if (!config.users) {
    io.err("registry-kit users: the configuration has no registrykit.users section: the server keeps no accounts");
    return 1;
  }
  if (config.storage.driver === "inmemory") {
    io.err("registry-kit users: the configured storage is inmemory: its accounts live only inside the running server");
    return 1;
  }
  const storage = openStorage(config);
  try {
    return await run(parsed, storageUserStore(storage), io);
  } catch (error) {
    io.err(`registry-kit users ${parsed.action}: ${failureText(error)}`);
    return 1;
  } finally {
    await storage.close?.();
  }
}

async function run(parsed: Parsed, store: UserStore, io: CliIo): Promise<number> {
  const name = parsed.name ?? "";
  switch (parsed.action) {
    case "list": {
      const users = await listAccounts(store);
      if (parsed.flags.has("--json")) io.out(JSON.stringify(users, null, 2));
      else for (const line of table(users)) io.out(line);
      return 0;
    }
    case "add": {
      const password = await readSecretLine(`password for ${name}: `, io);
      const email = parsed.email;
      const user = await createAccount(store, { username: name, password, admin: parsed.flags.has("--admin"), ...(email !== undefined ? { email } : {}) });
      io.out(`added ${user.username} (id ${user.user_id}${user.sysadmin_flag ? ", administrator" : ""})`);
      return 0;
    }
    case "passwd": {
      const password = await readSecretLine(`new password for ${name}: `, io);
      const user = await resetPassword(store, name, password);
      io.out(`password of ${user.username} changed`);
      return 0;
    }
    case "admin": {
      const user = await setAdministrator(store, name, !parsed.flags.has("--revoke"));
      io.out(`${user.username} is ${user.sysadmin_flag ? "now an administrator" : "no longer an administrator"}`);
      return 0;
    }
    default: {
      await deleteAccount(store, name);
      io.out(`deleted ${name.toLowerCase()}`);
      return 0;
    }
  }
}

/** The accounts as aligned columns. */
function table(users: PublicUser[]): string[] {
  const rows = [["ID", "NAME", "ADMIN", "EMAIL", "CREATED"], ...users.map((u) => [String(u.user_id), u.username, u.sysadmin_flag ? "yes" : "no", u.email || "-", u.creation_time])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "));
}

function failureText(error: unknown): string {
  if (error instanceof UserStoreError) {
    switch (error.code) {
      case "duplicate_username": return "that user name is taken";
      case "duplicate_email": return "that e-mail address is taken";
      case "last_admin": return "the last administrator can be neither deleted nor revoked";
      case "not_found": return error.message;
      case "full": return "no user id is left";
    }
  }
  return error instanceof Error ? error.message : String(error);
}
