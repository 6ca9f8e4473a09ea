/**
 * Run the identity + compute example on 127.0.0.1 and print the `openstack`
 * commands to try:
 *
 * ```sh
 * npx tsx examples/identity-compute/server.ts            # a free port
 * PORT=5000 npx tsx examples/identity-compute/server.ts
 * ```
 *
 * Users come from registry-kit's user store (in memory): `demo` (a member of
 * project `demo`) and `admin` (a system administrator). Passwords are random
 * per run unless `DEMO_PASSWORD` / `ADMIN_PASSWORD` are set.
 *
 * @module
 */
import { pathToFileURL } from "node:url";
import { serve } from "../../src/node/index.js";
import type { LogHook } from "../../src/http/log.js";
import { hashPassword, memoryUserStore, storeCredentialCheck } from "../../src/users/index.js";
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

/** The `openstack` command line for the example. */
export function openstackCommand(example: RunningExample, ...args: string[]): string {
  return [
    "openstack",
    `--os-auth-url ${example.authUrl}`,
    "--os-identity-api-version 3",
    `--os-username demo --os-password '${example.passwords.demo}'`,
    "--os-project-name demo --os-user-domain-name Default --os-project-domain-name Default",
    "--os-interface public",
    ...args,
  ].join(" ");
}

async function main(): Promise<void> {
  const port = process.env.PORT ? Number(process.env.PORT) : 0;
  const example = await startExample({
    port,
    demoPassword: process.env.DEMO_PASSWORD,
    adminPassword: process.env.ADMIN_PASSWORD,
    log: (e) => console.error(JSON.stringify(e)),
  });
  console.log(`identity + compute example on ${example.url}`);
  console.log(`  identity ${example.authUrl}, compute ${example.url}/compute/v2.1, image ${example.url}/image`);
  console.log(`  users: demo / ${example.passwords.demo}, admin / ${example.passwords.admin}`);
  console.log("\nTry:\n");
  console.log(`  ${openstackCommand(example, "token issue")}`);
  console.log(`  ${openstackCommand(example, "server list")}`);
  console.log(`  ${openstackCommand(example, "catalog list")}\n`);
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
