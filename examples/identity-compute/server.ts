/**
 * Run the identity + compute example on 127.0.0.1 and print, for the demo
 * user and for the administrator, the `OS_*` environment and the `openstack`
 * commands to try:
 *
 * ```sh
 * npm install && npm start              # in examples/identity-compute: a free port (README.md)
 * PORT=5000 npm start
 * ```
 *
 * Users come from registry-kit's user store (in memory): `demo` (a member of
 * project `demo`) and `admin` (a system administrator). Passwords are random
 * per run unless `DEMO_PASSWORD` / `ADMIN_PASSWORD` are set.
 *
 * @module
 */
import { pathToFileURL } from "node:url";
import { serve } from "registry-kit/node";
import type { LogHook } from "registry-kit";
import { hashPassword, memoryUserStore, storeCredentialCheck } from "registry-kit/users";
import { createExampleApp, type ExampleApp } from "./src/app.js";
import { randomString } from "./src/util.js";

/** Options of {@link startExample}. */
export interface StartExampleOptions {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default `0`: a free port. */
  port?: number;
  /** Password of user `demo`. Default: random. */
  demoPassword?: string;
  /** Password of user `admin`. Default: random. */
  adminPassword?: string;
  log?: LogHook;
}

/** A running example. */
export interface RunningExample {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The identity API URL to give `--os-auth-url`. */
  authUrl: string;
  users: { demo: string; admin: string };
  /** The passwords in use. */
  passwords: { demo: string; admin: string };
  app: ExampleApp;
  close(): Promise<void>;
}

/** Start the example. */
export async function startExample(options: StartExampleOptions = {}): Promise<RunningExample> {
  const passwords = {
    demo: options.demoPassword ?? randomString(12),
    admin: options.adminPassword ?? randomString(12),
  };
  const store = memoryUserStore();
  const user = (username: string, sysadmin: boolean, password: string) =>
    hashPassword(password).then((passwordHash) =>
      store.create({ username, email: "", realname: username, comment: "identity example", sysadmin, passwordHash }),
    );
  await user("demo", false, passwords.demo);
  await user("admin", true, passwords.admin);

  // The catalog needs the port, which is known only once the server listens.
  let app: ExampleApp | undefined;
  const running = await serve(
    (request) => (app ? app.handler(request) : Promise.resolve(new Response("starting", { status: 503 }))),
    { host: options.host ?? "127.0.0.1", port: options.port ?? 0 },
  );
  app = createExampleApp({ origin: running.url, checkCredentials: storeCredentialCheck(store), log: options.log });
  return {
    url: running.url,
    authUrl: `${running.url}/v3`,
    users: { demo: "demo", admin: "admin" },
    passwords,
    app,
    close: () => running.close(),
  };
}

/** The example's two users. */
export type ExampleUser = "demo" | "admin";

/**
 * The `OS_*` environment the `openstack` CLI reads, for `user`. Both users
 * scope to project `demo`; `admin` is a system administrator there (the
 * `admin` role), which `--all-projects` and `flavor list --all` need.
 */
export function openstackEnv(example: RunningExample, user: ExampleUser = "demo"): Record<string, string> {
  return {
    OS_AUTH_URL: example.authUrl,
    OS_IDENTITY_API_VERSION: "3",
    OS_USERNAME: example.users[user],
    OS_PASSWORD: example.passwords[user],
    OS_PROJECT_NAME: example.app.project.name,
    OS_USER_DOMAIN_NAME: "Default",
    OS_PROJECT_DOMAIN_NAME: "Default",
    OS_INTERFACE: "public",
  };
}

/** The commands the banner suggests to each user (arguments after `openstack`). */
export const SUGGESTED_COMMANDS: Readonly<Record<ExampleUser, readonly (readonly string[])[]>> = {
  demo: [["token", "issue"], ["server", "list"], ["flavor", "list"], ["catalog", "list"]],
  admin: [
    ["server", "list", "--all-projects", "--long"],
    ["flavor", "list", "--all", "--long"],
    ["endpoint", "list"],
    ["service", "list"],
  ],
};

/** `text` quoted for a POSIX shell when it needs it. */
function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** The one-line `openstack` command for the example, with every option on the command line. */
export function openstackCommand(example: RunningExample, ...args: string[]): string {
  return openstackCommandAs(example, "demo", ...args);
}

/** {@link openstackCommand} as `user`. */
export function openstackCommandAs(example: RunningExample, user: ExampleUser, ...args: string[]): string {
  const env = openstackEnv(example, user);
  return [
    "openstack",
    `--os-auth-url ${shellQuote(env.OS_AUTH_URL!)}`,
    "--os-identity-api-version 3",
    `--os-username ${shellQuote(env.OS_USERNAME!)} --os-password ${shellQuote(env.OS_PASSWORD!)}`,
    `--os-project-name ${shellQuote(env.OS_PROJECT_NAME!)} --os-user-domain-name Default --os-project-domain-name Default`,
    "--os-interface public",
    ...args,
  ].join(" ");
}

/**
 * What `server.ts` prints: the URLs, the users, and for each user the
 * `export OS_…` lines to paste into a shell and the commands to try then.
 */
export function banner(example: RunningExample): string {
  const lines = [
    `identity + compute example on ${example.url}`,
    `  identity ${example.authUrl}, compute ${example.url}/compute/v2.1, image ${example.url}/image`,
    `  users: demo / ${example.passwords.demo}, admin / ${example.passwords.admin}`,
  ];
  const who: Record<ExampleUser, string> = {
    demo: `demo, a member of project ${example.app.project.name}`,
    admin: `admin, an administrator (the admin role on project ${example.app.project.name})`,
  };
  for (const user of ["demo", "admin"] as const) {
    lines.push("", `As ${who[user]}:`, "");
    const env = Object.entries(openstackEnv(example, user)).map(([k, v]) => `${k}=${shellQuote(v)}`);
    lines.push(`  export ${env.slice(0, 4).join(" ")}`, `  export ${env.slice(4).join(" ")}`);
    for (const args of SUGGESTED_COMMANDS[user]) lines.push(`  openstack ${args.join(" ")}`);
  }
  lines.push("", "or, with every option on the command line:", "", `  ${openstackCommandAs(example, "admin", "server", "list", "--all-projects")}`, "");
  return lines.join("\n");
}

async function main(): Promise<void> {
  const port = process.env.PORT ? Number(process.env.PORT) : 0;
  const example = await startExample({
    port,
    demoPassword: process.env.DEMO_PASSWORD,
    adminPassword: process.env.ADMIN_PASSWORD,
    log: (e) => console.error(JSON.stringify(e)),
  });
  console.log(banner(example));
  const stop = () => {
    example.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
