/**
 * `registry-kit verify [--quarantine] [--dry-run] [--json] [--concurrency=N] [CONFIG]`:
 * re-hash every blob in the storage `serve` uses with the same CONFIG and
 * environment, and report (and quarantine) those whose bytes do not match
 * their digest (see docs/verify.md). Safe while the server runs.
 *
 * @module
 */
import { verifyBlobs, type VerifyReport } from "../registry/stores/base/verify.js";
import { describeStorage, openStorage } from "../server/all-in-one/all-in-one.js";
import { formatBytes, loadCommandConfig } from "./command-support.js";
import type { AllInOneConfig } from "../server/config/config.js";
import type { CliIo } from "./io.js";

export const VERIFY_USAGE = `Usage: registry-kit verify [--quarantine] [--dry-run] [--json] [--concurrency=N] [CONFIG]

Re-hashes every blob in the storage that \`registry-kit serve [CONFIG]\` uses
(same CONFIG, same environment) and reports each one whose bytes do not match
its digest. Safe while the server runs.

  --quarantine      move each mismatching blob under quarantine/ in the storage:
                    the registry then answers 404 for it and a re-push repairs it
  --dry-run         with --quarantine: report what would be moved, move nothing
  --json            print the report as one JSON document
  --concurrency=N   blobs hashed at once (default 2)

Exit codes: 0 every blob verifies, 1 a blob does not match its digest or could
not be read, 2 bad usage, 3 configuration or storage error.`;

/** Exit codes of `registry-kit verify`. */
export const VERIFY_EXIT = { ok: 0, mismatch: 1, usage: 2, failed: 3 } as const;

interface VerifyArgs {
  quarantine: boolean;
  dryRun: boolean;
  json: boolean;
  concurrency: number;
  file?: string;
}

/** Parse the arguments; `undefined` on bad usage, `"help"` for --help. */
function parseArgs(args: string[]): VerifyArgs | "help" | undefined {
  const parsed: VerifyArgs = { quarantine: false, dryRun: false, json: false, concurrency: 2 };
  const positional: string[] = [];
  for (const arg of args) {
    if (arg === "--quarantine") parsed.quarantine = true;
    else if (arg === "--dry-run" || arg === "-n") parsed.dryRun = true;
    else if (arg === "--json") parsed.json = true;
    else if (arg.startsWith("--concurrency=")) {
      const value = arg.slice("--concurrency=".length);
      if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 256) return undefined;
      parsed.concurrency = Number(value);
    } else if (arg === "--help" || arg === "-h") return "help";
    else if (arg.startsWith("-")) return undefined;
    else positional.push(arg);
  }
  if (positional.length > 1) return undefined;
  if (positional[0] !== undefined) parsed.file = positional[0];
  return parsed;
}

/** Run the `verify` command; resolves to the exit code ({@link VERIFY_EXIT}). */
export async function verifyCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseArgs(args);
  if (parsed === "help") {
    io.out(VERIFY_USAGE);
    return VERIFY_EXIT.ok;
  }
  if (!parsed) {
    io.err(VERIFY_USAGE);
    return VERIFY_EXIT.usage;
  }
  let config: AllInOneConfig;
  try {
    config = await loadCommandConfig(parsed.file, io);
  } catch (error) {
    io.err(`registry-kit verify: configuration error: ${error instanceof Error ? error.message : String(error)}`);
    return VERIFY_EXIT.failed;
  }
  if (config.storage.driver === "inmemory") {
    io.err("registry-kit verify: the configured storage is inmemory; there is nothing to verify");
    return VERIFY_EXIT.failed;
  }

  const storage = openStorage(config);
  let report: VerifyReport;
  try {
    report = await verifyBlobs(storage, { quarantine: parsed.quarantine, dryRun: parsed.dryRun, concurrency: parsed.concurrency });
  } catch (error) {
    io.err(`registry-kit verify: failed: ${error instanceof Error ? error.message : String(error)}`);
    return VERIFY_EXIT.failed;
  } finally {
    await storage.close?.();
  }
  const where = describeStorage(config.storage);
  if (parsed.json) io.out(JSON.stringify({ storage: where, ...report }));
  else for (const line of verifyReportLines(report, where)) io.out(line);
  return report.mismatches.length > 0 || report.errors.length > 0 ? VERIFY_EXIT.mismatch : VERIFY_EXIT.ok;
}

/** The report as printed: a header, one line per mismatch and per unreadable blob, then a summary. */
export function verifyReportLines(report: VerifyReport, where: string): string[] {
  const lines = [`registry-kit verify${report.dryRun ? " (dry run)" : ""}: ${where}`];
  for (const m of report.mismatches) {
    const fate = m.quarantinedAs !== undefined ? `; quarantined as ${m.quarantinedAs}` : report.quarantine && report.dryRun ? "; would be quarantined" : "";
    lines.push(`mismatch ${m.digest}: its ${m.size} bytes hash to ${m.actualDigest}${fate}`);
  }
  for (const e of report.errors) lines.push(`unreadable ${e.digest}: ${e.message}`);
  const scanned = `checked ${report.checked} blobs, ${report.bytes} bytes (${formatBytes(report.bytes)})`;
  const clean = report.mismatches.length === 0 && report.errors.length === 0;
  lines.push(clean
    ? `${scanned}; all verify${report.vanished > 0 ? ` (${report.vanished} vanished during the run)` : ""}`
    : `${scanned}; mismatches ${report.mismatches.length}, quarantined ${report.quarantined}, unreadable ${report.errors.length}, vanished during the run ${report.vanished}`);
  return lines;
}
