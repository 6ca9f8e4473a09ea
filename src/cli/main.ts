/**
 * `registry-kit serve [CONFIG]`: the all-in-one server. Run by
 * bin/registry-kit.mjs (from dist/ when built, else from these sources via tsx).
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { readsRequestBasics } from "../runtime/adapter-capabilities.js";
import { serve, TlsConfigError, type RunningServer, type ServeOptions } from "../node/index.js";
import { attachAccessLog, type RequestEmitter } from "./access-log.js";
import { createAllInOne, type AllInOne } from "../server/all-in-one/all-in-one.js";
import { bannerLines, listenAddress, startupWarnings } from "./banner.js";
import { ConfigError, parseConfigText, resolveConfig, type AllInOneConfig } from "../server/config/config.js";
import { gcCommand } from "./gc.js";
import { cliLogHook } from "./log.js";
import { verifyCommand } from "./verify.js";
import { usersCommand } from "./users.js";
import { repositoriesCommand } from "./repositories.js";
import { defaultIo, type CliIo } from "./io.js";
import { auditCommand } from "./audit.js";

export type { CliIo } from "./io.js";

const USAGE = `Usage: registry-kit serve [CONFIG]
       registry-kit gc [--dry-run] [--remove-untagged] [CONFIG]   (see registry-kit gc --help)
       registry-kit verify [--quarantine] [--dry-run] [--json] [CONFIG]   (see registry-kit verify --help)
       registry-kit users list|add|passwd|admin|delete …   (see registry-kit users --help)
       registry-kit repositories delete NAME [--force] [CONFIG] | quotas [CONFIG]
       registry-kit audit list [--since TIME] [--project NAME] | verify [CONFIG]   (see registry-kit audit --help)

Runs a container registry (/v2/), its token service (/service/token) and the
user-management API (/api/users) on one origin.

  CONFIG   a CNCF Distribution config.yml (YAML or JSON), optionally with a
           registrykit section; see docs/configuration.md. Without it:
           127.0.0.1:5000 (HOST, PORT), data under ./data (REGISTRY_KIT_DATA).

Environment: REGISTRY_<SECTION>_<KEY> overrides any key (e.g. REGISTRY_HTTP_ADDR),
REGISTRY_KIT_ADMIN_USER / REGISTRY_KIT_ADMIN_PASSWORD set the first administrator.`;

/**
 * Run the CLI. Resolves to an exit code when the command ends by itself
 * (help, bad usage, bad configuration); `serve` keeps running and exits the
 * process on SIGINT/SIGTERM after draining.
 */
export async function main(argv: string[], io: CliIo = defaultIo()): Promise<number | undefined> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    (command === undefined ? io.err : io.out)(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version" || command === "version") {
    io.out(await version());
    return 0;
  }
  if (command === "gc") return gcCommand(rest, io);
  if (command === "verify") return verifyCommand(rest, io);
  if (command === "users") return usersCommand(rest, io);
  if (command === "repositories") return repositoriesCommand(rest, io);
  if (command === "audit") return auditCommand(rest, io);
  if (command !== "serve" || rest.length > 1 || rest.some((a) => a.startsWith("-"))) {
    io.err(USAGE);
    return 2;
  }
  let config: AllInOneConfig;
  try {
    const document = rest[0] === undefined ? undefined : parseConfigText(await readFile(rest[0], "utf8"), rest[0]);
    const resolved = resolveConfig({ document, env: io.env, cwd: io.cwd });
    for (const warning of resolved.warnings) io.err(`registry-kit: warning: ${warning}`);
    config = resolved.config;
  } catch (error) {
    io.err(`registry-kit: configuration error: ${error instanceof ConfigError || isFsError(error) ? error.message : String(error)}`);
    return 1;
  }
  return run(config, io);
}

async function run(config: AllInOneConfig, io: CliIo): Promise<number | undefined> {
  const log = cliLogHook(config.log.level, io.err);
  let app: AllInOne | undefined;
  let server: RunningServer;
  try {
    // Bind first so that port 0 and the default realm know the real port.
    server = await serve(
      // Forwards to the all-in-one handler, which reads only the basics of a request.
      readsRequestBasics((request: Request) => (app ? app.handler(request) : Promise.resolve(new Response("starting", { status: 503 })))),
      { host: config.http.host, port: config.http.port, trustProxy: config.http.trustProxy, log, ...listenOptions(config.http) },
    );
  } catch (error) {
    if (error instanceof TlsConfigError) io.err(`registry-kit: configuration error: http.tls: ${error.message}`);
    else io.err(`registry-kit: cannot listen on ${config.http.host}:${config.http.port}: ${(error as Error).message}${busyPortHint(error, config, io.env)}`);
    return 1;
  }
  try {
    app = await createAllInOne(config, { origin: server.url, log });
  } catch (error) {
    await server.close(0);
    io.err(`registry-kit: start-up failed: ${(error as Error).message}`);
    return 1;
  }
  let debugServer: RunningServer | undefined;
  const debug = config.http.debug;
  if (debug && app.debugHandler) {
    try {
      // Its own port: health and metrics are never served on the main one.
      debugServer = await serve(app.debugHandler, { host: debug.addr.host, port: debug.addr.port, log });
    } catch (error) {
      await server.close(0);
      await app.close();
      io.err(`registry-kit: cannot listen on ${debug.addr.host}:${debug.addr.port} (http.debug.addr): ${(error as Error).message}`);
      return 1;
    }
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      io.err(`registry-kit: ${signal} again, exiting now`);
      process.exit(1);
    }
    stopping = true;
    io.err(`registry-kit: ${signal} received, finishing in-flight requests (up to ${config.http.drainTimeout} ms)`);
    Promise.all([server.close(config.http.drainTimeout), debugServer?.close(0)])
      .then(() => app?.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          io.err(`registry-kit: shutdown failed: ${String(error)}`);
          process.exit(1);
        },
      );
  };
  // Installed before the banner, so a signal right after it is always handled.
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  if (config.log.accessLog) attachAccessLog(server.server as RequestEmitter, io.out);
  // With the port actually bound (PORT=0 picks one).
  for (const warning of startupWarnings({ ...config, http: { ...config.http, port: server.port } }, app.info)) io.err(`registry-kit: warning: ${warning}`);
  const banner = bannerLines(server.url, app.info, await version(), listenAddress(server.server.address() as AddressInfo));
  if (debugServer) {
    const served = ["/debug/health", ...(debug?.prometheus ? [debug.prometheus.path] : [])].join(", ");
    // Before the closing "ready" line.
    banner.splice(banner.length - 1, 0, `  debug           ${debugServer.url} (${served}; not on the main port)`);
  }
  for (const line of banner) io.out(line);
  return undefined;
}

/**
 * For a port already in use, how to pick another: `PORT=` when the address
 * comes from the built-in defaults, else the key it comes from.
 */
function busyPortHint(error: unknown, config: AllInOneConfig, env: CliIo["env"]): string {
  if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") return "";
  const next = config.http.port < 65535 ? config.http.port + 1 : config.http.port - 1;
  if (config.source === "defaults" && !env.REGISTRY_HTTP_ADDR) {
    return `\n  another server holds port ${config.http.port}; choose another with PORT=${next} (or PORT=0 for any free one)`;
  }
  return `\n  another server holds port ${config.http.port}; set another port in http.addr (or REGISTRY_HTTP_ADDR=${config.http.host.includes(":") ? `[${config.http.host}]` : config.http.host}:${next})`;
}

/** `serve()`'s TLS and HTTP/2 options from the `http` section. */
function listenOptions(http: AllInOneConfig["http"]): ServeOptions {
  if (!http.tls) return { h2c: http.h2c };
  const { certificate, key, clientCas, minimumTls, ciphers } = http.tls;
  return {
    tls: { certFile: certificate, keyFile: key, clientCaFiles: clientCas, minVersion: minimumTls, ...(ciphers !== undefined ? { ciphers } : {}) },
    http2: http.http2,
  };
}

function isFsError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === "string";
}

async function version(): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
    return pkg.version ?? "unknown";
  } catch {
    return "unknown";
  }
}
