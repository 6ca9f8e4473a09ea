/**
 * `registry-kit audit list [--since TIME] [--project NAME] [--json] [CONFIG]`
 * and `registry-kit audit verify [CONFIG]`: read and check the audit log in
 * the storage `registry-kit serve [CONFIG]` uses (docs/audit.md).
 *
 * @module
 */
import { storageAuditLog } from "../audit/log.js";
import type { AuditRecord } from "../audit/record.js";
import { verifyAuditLog } from "../audit/verify.js";
import { openStorage } from "../server/all-in-one/all-in-one.js";
import type { AllInOneConfig } from "../server/config/config.js";
import { loadCommandConfig } from "./command-support.js";
import type { CliIo } from "./io.js";

export const AUDIT_USAGE = `Usage: registry-kit audit list [--since TIME] [--project NAME] [--json] [CONFIG]
       registry-kit audit verify [CONFIG]

list prints the audit log of the storage \`registry-kit serve [CONFIG]\` uses, oldest
first, one record a line (--json: the stored JSON lines). --since takes an RFC 3339
time or an age (30m, 24h, 7d); --project keeps one project's records.

verify checks the hash chain: every record present, unchanged, and linked to the
one before; exit status 1 when it is broken, naming each record where it breaks.`;

/** Run the `audit` command; resolves to the exit code. */
export async function auditCommand(args: string[], io: CliIo, now: () => number = Date.now): Promise<number> {
  const [action, ...rest] = args;
  if (action === "--help" || action === "-h" || action === "help") {
    io.out(AUDIT_USAGE);
    return 0;
  }
  const parsed = action === "list" || action === "verify" ? parseArgs(action, rest, now) : undefined;
  if (!parsed) {
    io.err(AUDIT_USAGE);
    return 2;
  }
  if (typeof parsed === "string") {
    io.err(`registry-kit audit: ${parsed}`);
    return 2;
  }
  let config: AllInOneConfig;
  try {
    config = await loadCommandConfig(parsed.file, io);
    if (config.storage.driver === "inmemory") throw new Error("the configured storage is inmemory: its audit log lives only inside the running server");
  } catch (error) {
    io.err(`registry-kit audit: configuration error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const storage = openStorage(config);
  try {
    if (action === "verify") return await verify(storage, io);
    const log = storageAuditLog(storage);
    let after: number | undefined;
    for (;;) {
      const page = await log.list({ limit: 1000, ...(after !== undefined ? { after } : {}), ...(parsed.since ? { since: parsed.since } : {}), ...(parsed.project !== undefined ? { project: parsed.project } : {}) });
      for (const record of page.records) io.out(parsed.json ? JSON.stringify(record) : line(record));
      if (page.next === undefined) return 0;
      after = page.next;
    }
  } catch (error) {
    io.err(`registry-kit audit: failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await storage.close?.();
  }
}

async function verify(storage: ReturnType<typeof openStorage>, io: CliIo): Promise<number> {
  const report = await verifyAuditLog(storage);
  if (report.problems.length === 0) {
    io.out(`audit log intact: ${report.records} records, last hash ${report.lastHash}`);
    return 0;
  }
  for (const p of report.problems) io.err(`record ${p.seq}: ${p.problem}`);
  io.err(`audit log broken: ${report.problems.length} problem(s) in ${report.records} records`);
  return 1;
}

/** One record as a line: number, time, action, result, who, from, target, detail. */
function line(r: AuditRecord): string {
  const who = r.who.name !== undefined ? `${r.who.kind}:${r.who.name}` : r.who.kind;
  const from = [r.from?.channel, r.from?.addr].filter(Boolean).join("@") || "-";
  const target = Object.entries(r.target ?? {}).map(([k, v]) => `${k}=${v}`).join(" ");
  return [String(r.seq), r.time, r.action, r.result, who, from, target, r.detail ?? ""].filter((f) => f !== "").join("  ");
}

interface Parsed { file?: string; since?: Date; project?: string; json: boolean }

/** The options of `list`/`verify`, an error message, or `undefined` for bad usage. */
function parseArgs(action: "list" | "verify", rest: string[], now: () => number): Parsed | string | undefined {
  const out: Parsed = { json: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (action === "list" && (arg === "--since" || arg === "--project")) {
      const value = rest[++i];
      if (value === undefined) return undefined;
      if (arg === "--project") out.project = value;
      else {
        const since = sinceOf(value, now());
        if (!since) return `--since: not an RFC 3339 time nor an age (30m, 24h, 7d): ${value}`;
        out.since = since;
      }
    } else if (action === "list" && arg === "--json") out.json = true;
    else if (arg.startsWith("-") || out.file !== undefined) return undefined;
    else out.file = arg;
  }
  return out;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function sinceOf(value: string, now: number): Date | undefined {
  const age = /^(\d{1,9})([smhd])$/.exec(value);
  if (age) return new Date(now - Number(age[1]) * UNIT_MS[age[2]!]!);
  const time = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : NaN;
  return Number.isFinite(time) ? new Date(time) : undefined;
}
