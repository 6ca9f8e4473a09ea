/**
 * `registry-kit audit list|verify` as the real command (`node
 * bin/registry-kit.mjs audit …`) over a filesystem storage holding an audit
 * log: `verify` passes an intact chain and names the record where an edited
 * or a deleted record breaks it (issue 45, part 4). System project: child
 * processes.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recordKey, storageAuditLog } from "../../src/audit/log.js";
import { fsStorage } from "../../src/storage/fs/index.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
let dir: string;
let configFile: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-audit-cli-"));
  configFile = path.join(dir, "config.yml");
  await writeFile(configFile, `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\n`);
  let t = Date.parse("2026-03-01T10:00:00Z");
  const log = storageAuditLog(fsStorage({ root: `${dir}/data` }), { now: () => new Date((t += 3_600_000)) });
  await log.append({ action: "signin", who: { kind: "user", name: "admin" }, from: { channel: "token", addr: "192.0.2.1" }, result: "refused", detail: "wrong user name or password" });
  await log.append({ action: "push", who: { kind: "user", name: "admin" }, result: "ok", target: { repository: "team/app", tag: "v1" }, project: "team" });
  await log.append({ action: "user.created", who: { kind: "user", name: "admin" }, result: "ok", target: { user: "dave" } });
  await log.append({ action: "delete", who: { kind: "user", name: "dave" }, result: "ok", target: { repository: "other/x" }, project: "other" });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, "audit", ...args], { cwd: dir, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, out, err };
}

const recordFile = (seq: number) => path.join(dir, "data", recordKey(seq));

describe("registry-kit audit", () => {
  it("list prints the records, --project and --since filter them, --json prints the stored lines", async () => {
    const all = await run(["list", configFile]);
    expect(all).toMatchObject({ code: 0, err: "" });
    expect(all.out.trim().split("\n")).toEqual([
      "1  2026-03-01T11:00:00.000Z  signin  refused  user:admin  token@192.0.2.1  wrong user name or password",
      "2  2026-03-01T12:00:00.000Z  push  ok  user:admin  -  repository=team/app tag=v1",
      "3  2026-03-01T13:00:00.000Z  user.created  ok  user:admin  -  user=dave",
      "4  2026-03-01T14:00:00.000Z  delete  ok  user:dave  -  repository=other/x",
    ]);
    expect((await run(["list", "--project", "team", configFile])).out.trim().split("\n").map((l) => l.split("  ")[0])).toEqual(["2"]);
    expect((await run(["list", "--since", "2026-03-01T13:00:00Z", configFile])).out.trim().split("\n").map((l) => l.split("  ")[0])).toEqual(["3", "4"]);
    const json = await run(["list", "--json", configFile]);
    expect(json.out.split("\n")[0]).toBe((await readFile(recordFile(1), "utf8")).trim());
    const bad = await run(["list", "--since", "yesterday", configFile]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--since: not an RFC 3339 time nor an age/);
  });

  it("verify passes an intact log, and detects an edited record and a deleted one", async () => {
    const intact = await run(["verify", configFile]);
    expect(intact.code).toBe(0);
    expect(intact.out).toMatch(/^audit log intact: 4 records, last hash [0-9a-f]{64}\n$/);

    const original = await readFile(recordFile(2), "utf8");
    await writeFile(recordFile(2), original.replace('"name":"admin"', '"name":"mallory"'));
    const edited = await run(["verify", configFile]);
    expect(edited.code).toBe(1);
    expect(edited.err).toContain("record 3: prev does not match record 2");

    await writeFile(recordFile(2), original);
    expect((await run(["verify", configFile])).code).toBe(0);
    await unlink(recordFile(3));
    const deleted = await run(["verify", configFile]);
    expect(deleted.code).toBe(1);
    expect(deleted.err).toContain("record 3: record 3 is missing");
  });
});
