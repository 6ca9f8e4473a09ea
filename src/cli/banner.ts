/**
 * The start-up banner: what listens where, and where data and keys live.
 *
 * @module
 */
import type { AllInOneInfo } from "./all-in-one.js";
import type { AllInOneConfig } from "./config.js";

/** The banner's first line; the CLI test waits for it. */
export const READY = "registry-kit listening on";

/** The banner's last line, printed once start-up is complete. */
export const LAST_LINE = "  ready; SIGINT (Ctrl-C) or SIGTERM stops the server gracefully";

/** Lines of the banner for a server at `url`. */
export function bannerLines(url: string, info: AllInOneInfo, version: string): string[] {
  const lines = [
    `${READY} ${url} (registry-kit ${version})`,
    `  registry        ${url}/v2/`,
  ];
  if (info.tokenService) lines.push(`  token service   ${url}${info.tokenService.path}`);
  if (info.users) {
    lines.push(`  users API       ${url}${info.users.path}${info.users.audience ? ` (Basic, or Bearer tokens for service "${info.users.audience}")` : ""}`);
  }
  if (info.auth.mode === "none") lines.push("  auth            NONE: anyone who can reach this port can push and pull");
  else {
    lines.push(`  auth            token, realm ${info.auth.realm} (service "${info.auth.service}", issuer "${info.auth.issuer}")`);
    if (info.auth.external) lines.push(`                  external token service; trusting ${info.auth.rootCertBundle}`);
  }
  lines.push(`  storage         ${info.storage}`);
  if (info.verify) lines.push(`  verify          every ${formatInterval(info.verify.intervalMs)}, ${info.verify.quarantine ? "quarantine on" : "report only"}`);
  lines.push(`  keys            ${info.keyDirectory}`);
  if (info.tokenService) {
    lines.push(`  signing key     ${info.tokenService.keyFile}${info.tokenService.keyCreated ? " (generated now)" : ""}`);
    if (info.tokenService.certificateFile) lines.push(`  root cert       ${info.tokenService.certificateFile} (give this to other registries as auth.token.rootcertbundle)`);
    lines.push(`  key id (kid)    ${info.tokenService.kid}`);
  }
  lines.push(`  upload secret   ${info.uploadSecret.source === "config" ? "from http.secret" : `${info.uploadSecret.file}${info.uploadSecret.created ? " (generated now)" : ""}`}`);
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

/** `86400000` → `24h`, `90000` → `90s`: the largest unit that divides the interval. */
function formatInterval(ms: number): string {
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Hosts that mean "every interface". */
const ANY_HOST = new Set(["0.0.0.0", "::", "::0", "0:0:0:0:0:0:0:0"]);

/**
 * Start-up warnings about the running configuration (the CLI prints them to
 * stderr as `registry-kit: warning: …`). Today one: listening on every
 * interface while the token realm was derived from the listen address, which
 * names loopback, so clients on other hosts are sent to their own 127.0.0.1.
 */
export function startupWarnings(config: AllInOneConfig, info: AllInOneInfo): string[] {
  const warnings: string[] = [];
  if (
    ANY_HOST.has(config.http.host.toLowerCase()) &&
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
