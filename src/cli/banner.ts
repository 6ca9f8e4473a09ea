/**
 * The start-up banner: what listens where, and where data and keys live.
 *
 * @module
 */
import type { AllInOneInfo } from "./all-in-one.js";

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
  if (info.users) lines.push(`  users API       ${url}${info.users.path}`);
  if (info.auth.mode === "none") lines.push("  auth            NONE: anyone who can reach this port can push and pull");
  else {
    lines.push(`  auth            token, realm ${info.auth.realm} (service "${info.auth.service}", issuer "${info.auth.issuer}")`);
    if (info.auth.external) lines.push(`                  external token service; trusting ${info.auth.rootCertBundle}`);
  }
  lines.push(`  storage         ${info.storage}`);
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
