/**
 * The start-up banner: what listens where, where data and keys live, read-only
 * mode and the policies in force.
 *
 * @module
 */
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import type { AllInOneInfo } from "../server/all-in-one/all-in-one.js";
import type { AllInOneConfig } from "../server/config/config.js";
import { formatBytes } from "../util/size.js";

/** The banner's first line; the CLI test waits for it. */
export const READY = "registry-kit listening on";

/** The banner's last line, printed once start-up is complete. */
export const LAST_LINE = "  ready; SIGINT (Ctrl-C) or SIGTERM stops the server gracefully";

/** Where the server is bound, for the banner's first lines. */
export interface ListenAddress {
  /** The address actually bound (`server.address().address`), e.g. `127.0.0.1`, `0.0.0.0`, `::`. */
  address: string;
  /** The port actually bound. */
  port: number;
  /** When bound to every interface: this machine's other addresses, to show URLs that other hosts can use. */
  external?: string[];
}

/**
 * Lines of the banner for a server at `url` (a URL that works from this
 * machine). With `listen` bound to every interface (`0.0.0.0`, `::`), the
 * first line says so and names the bound address; `url` and the machine's
 * `external` addresses follow as URLs to use. Otherwise the first line is
 * `registry-kit listening on <url>`.
 */
export function bannerLines(url: string, info: AllInOneInfo, version: string, listen?: ListenAddress): string[] {
  const lines: string[] = [];
  if (listen && isAnyHost(listen.address)) {
    lines.push(`${READY} all interfaces, ${hostPort(listen.address, listen.port)} (registry-kit ${version})`);
    lines.push(`  this machine    ${url}`);
    const scheme = url.startsWith("https:") ? "https" : "http";
    const others = (listen.external ?? []).map((address) => `${scheme}://${hostPort(address, listen.port)}`);
    lines.push(`  other hosts     ${others.length > 0 ? others.join(", ") : `${scheme}://<this machine's name or address>:${listen.port}`}`);
  } else {
    lines.push(`${READY} ${url} (registry-kit ${version})`);
  }
  lines.push(`  registry        ${url}${info.registryPath}`);
  if (info.tokenService) lines.push(`  token service   ${url}${info.tokenService.path}`);
  if (info.users) {
    lines.push(`  users API       ${url}${info.users.path}${info.users.audience ? ` (Basic, or Bearer tokens for service "${info.users.audience}")` : ""}`);
  }
  if (info.ui) lines.push(`  web page        ${url}${info.ui.path}`);
  if (info.auth.mode === "none") lines.push("  auth            NONE: anyone who can reach this port can push and pull");
  else if (info.auth.mode === "htpasswd") lines.push(`  auth            htpasswd ${info.auth.path} (Basic, realm "${info.auth.realm}")`);
  else {
    lines.push(`  auth            token, realm ${info.auth.realm} (service "${info.auth.service}", issuer "${info.auth.issuer}")`);
    if (info.auth.external) {
      const trusted = [info.auth.rootCertBundle, info.auth.jwks && `JWKS ${info.auth.jwks}`].filter(Boolean).join(" and ");
      lines.push(`                  external token service; trusting ${trusted}`);
    }
  }
  lines.push(`  storage         ${info.storage}`);
  if (info.readOnly) lines.push("  mode            READ-ONLY (storage.maintenance.readonly): every write gets 405, reads work");
  lines.push(...policyLines(info.policies));
  for (const u of info.proxy ?? []) {
    const what = u.prefix === "" ? "every repository" : `${u.prefix}*`;
    lines.push(`  pull-through    ${what} from ${u.url}${u.authenticated ? " (with credentials)" : ""}, tags confirmed after ${formatInterval(u.ttlSeconds * 1000)}, pushes ${u.allowPush ? "allowed" : "refused"}`);
  }
  if (info.verify) lines.push(`  verify          every ${formatInterval(info.verify.intervalMs)}, ${info.verify.quarantine ? "quarantine on" : "report only"}`);
  // A random in-memory upload secret means the directory could not be written, so nothing is kept there.
  lines.push(`  keys            ${info.keyDirectory}${info.uploadSecret.source === "memory" ? " (not writable: nothing kept)" : ""}`);
  if (info.tokenService) {
    lines.push(`  signing key     ${info.tokenService.keyFile}${info.tokenService.keyCreated ? " (generated now)" : ""}`);
    if (info.tokenService.certificateFile) lines.push(`  root cert       ${info.tokenService.certificateFile} (give this to other registries as auth.token.rootcertbundle)`);
    lines.push(`  key id (kid)    ${info.tokenService.kid}`);
  }
  lines.push(`  upload secret   ${uploadSecretLine(info.uploadSecret)}`);
  if (info.admin) {
    lines.push(`  administrator   "${info.admin.username}" created`);
    if (info.admin.password) {
      lines.push(`  admin password  ${info.admin.password}`);
      lines.push("                  (shown once; set REGISTRY_KIT_ADMIN_PASSWORD to choose it)");
    }
  }
  lines.push(LAST_LINE);
  return lines;
}

/** One line per policy in force, the first headed `policies`; `none` without any. */
function policyLines(policies: AllInOneInfo["policies"]): string[] {
  const items: string[] = [];
  const tags = policies?.immutableTags;
  if (tags) {
    const globs = Array.isArray(tags) ? tags.join(", ") : Object.entries(tags as Record<string, readonly string[]>).map(([repo, t]) => `${repo}: ${t.join(", ")}`).join("; ");
    items.push(`immutable tags ${globs}`);
  }
  if (policies?.quotas) items.push(`quotas ${Object.entries(policies.quotas).map(([glob, bytes]) => `${glob} ${formatBytes(bytes)}`).join(", ")}`);
  if (policies?.retentionRules) {
    const rules = `${policies.retentionRules} rule${policies.retentionRules === 1 ? "" : "s"}`;
    items.push(`retention ${rules}, applied by ${policies.gc ? "the scheduled gc" : "`registry-kit gc`"}`);
  }
  const gc = policies?.gc;
  if (gc) items.push(`gc every ${formatInterval(gc.intervalMs)}${gc.removeUntagged ? ", untagged manifests removed" : ""}${gc.dryRun ? ", dry run (reports only)" : ""}`);
  if (items.length === 0) return ["  policies        none"];
  return items.map((item, i) => `${i === 0 ? "  policies        " : "                  "}${item}`);
}

function uploadSecretLine(secret: AllInOneInfo["uploadSecret"]): string {
  if (secret.source === "config") return "from http.secret";
  if (secret.source === "memory") return "random, in memory (lost at exit; see the warning above)";
  return `${secret.file}${secret.created ? " (generated now)" : ""}`;
}

/** Distribution's warning when it generates the upload secret, word for word (registry/handlers/app.go). */
export const RANDOM_SECRET_WARNING =
  "No HTTP secret provided - generated random secret. This may cause problems with uploads if multiple registries are behind a load-balancer. " +
  "To provide a shared secret, fill in http.secret in the configuration file or set the REGISTRY_HTTP_SECRET environment variable.";

/** `86400000` → `24h`, `90000` → `90s`: the largest unit that divides the interval. */
function formatInterval(ms: number): string {
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Hosts that mean "every interface". */
const ANY_HOST = new Set(["0.0.0.0", "::", "::0", "0:0:0:0:0:0:0:0"]);

/** Whether `host` means "every interface" (`0.0.0.0`, `::`). */
export function isAnyHost(host: string): boolean {
  return ANY_HOST.has(host.toLowerCase());
}

/**
 * The {@link ListenAddress} of a bound server (`server.address()`); when that
 * is every interface, with this machine's non-loopback addresses from
 * `interfaces` (IPv4 only when bound to `0.0.0.0`; no link-local IPv6, which
 * needs a zone id in a URL; at most four).
 */
export function listenAddress(bound: AddressInfo, interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces()): ListenAddress {
  if (!isAnyHost(bound.address)) return { address: bound.address, port: bound.port };
  const ipv4Only = bound.family === "IPv4";
  const external = Object.values(interfaces)
    .flatMap((addresses) => addresses ?? [])
    .filter((a) => !a.internal && (a.family === "IPv4" || (!ipv4Only && !a.address.toLowerCase().startsWith("fe80:"))))
    .map((a) => a.address)
    .slice(0, 4);
  return { address: bound.address, port: bound.port, external };
}

/** `host:port`, an IPv6 address in brackets. */
function hostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * Start-up warnings about the running configuration (the CLI prints them to
 * stderr as `registry-kit: warning: …`): an upload secret generated in memory
 * (Distribution's warning, and why the key directory was not used); listening
 * on every interface while the token realm was derived from the listen
 * address, which names loopback, so clients on other hosts are sent to their
 * own 127.0.0.1.
 */
export function startupWarnings(config: AllInOneConfig, info: AllInOneInfo): string[] {
  const warnings: string[] = [];
  if (info.uploadSecret.source === "memory") {
    warnings.push(
      `${RANDOM_SECRET_WARNING} (Not kept in ${config.keyDirectory}: ${info.uploadSecret.reason ?? "not writable"}; ` +
        "set registrykit.keydirectory to a writable directory to keep one across restarts.)",
    );
  }
  if (
    isAnyHost(config.http.host) &&
    info.auth.mode === "token" &&
    config.auth?.realm === undefined &&
    config.http.publicUrl === undefined
  ) {
    warnings.push(
      `listening on ${config.http.host.includes(":") ? `[${config.http.host}]` : config.http.host}:${config.http.port} (every interface) but the token realm is ${info.auth.realm}, ` +
        "which clients on other hosts cannot reach (they would ask their own loopback for tokens); " +
        "set auth.token.realm (REGISTRY_AUTH_TOKEN_REALM) or http.host (REGISTRY_HTTP_HOST) to a URL they can reach",
    );
  }
  return warnings;
}
