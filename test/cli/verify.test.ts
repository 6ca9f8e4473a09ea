/**
 * `registry-kit verify`: in-process through `main()` (the same config
 * resolution as `serve`), and as the real command (`node bin/registry-kit.mjs
 * verify`) on the filesystem driver.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main, type CliIo } from "../../src/cli/main.js";
import { createRegistry } from "../../src/registry/index.js";
import { fsStorage } from "../../src/storage/fs/index.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
const sha256 = (data: string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;
let data: string;

beforeEach(async () => {
  data = await mkdtemp(path.join(tmpdir(), "rk-verify-"));
});
afterEach(async () => {
  await rm(data, { recursive: true, force: true });
});

function io(env: Record<string, string> = {}): CliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), env: { REGISTRY_KIT_DATA: data, ...env }, cwd: data };
}

const blobFile = (root: string, digest: string) => {
  const [algorithm, hex] = digest.split(":") as [string, string];
  return path.join(root, "blobs", algorithm, hex.slice(0, 2), hex, "data");
};
const present = (file: string) => stat(file).then(() => true, () => false);

/** Push two blobs into `root` through the registry, then overwrite the second one's file with other bytes. */
async function seed(root: string): Promise<{ good: string; bad: string }> {
  const storage = fsStorage({ root, fsync: false });
  const registry = createRegistry({ storage, uploadSecret: "s" });
  const put = async (body: string): Promise<string> => {
    const digest = sha256(body);
    const res = await registry(new Request(`http://x/v2/app/blobs/uploads/?digest=${digest}`, { method: "POST", body }));
    expect(res.status).toBe(201);
    return digest;
  };
  const good = await put("good layer");
  const bad = await put("layer that rots");
  await storage.close?.();
  await writeFile(blobFile(root, bad), "layer that r0ts");
  return { good, bad };
}

describe("registry-kit verify", () => {
  it("uses serve's default data directory: exits 1 and prints each blob whose bytes do not match its name; moves nothing without --quarantine", async () => {
    const root = path.join(data, "registry");
    const { bad } = await seed(root);

    const out = io();
    expect(await main(["verify"], out)).toBe(1);

    expect(out.lines).toEqual([
      `registry-kit verify: filesystem ${root}`,
      `mismatch ${bad}: its 15 bytes hash to ${sha256("layer that r0ts")}`,
      "checked 2 blobs, 25 bytes (25 B); mismatches 1, quarantined 0, unreadable 0, vanished during the run 0",
    ]);
    expect(out.errors).toEqual([]);
    expect(await readFile(blobFile(root, bad), "utf8")).toBe("layer that r0ts");
  });

  it("--quarantine --dry-run moves nothing; --quarantine moves the bytes under quarantine/; the next run exits 0", async () => {
    const root = path.join(data, "registry");
    const { good, bad } = await seed(root);

    const dry = io();
    expect(await main(["verify", "--quarantine", "--dry-run"], dry)).toBe(1);
    expect(dry.lines[0]).toBe(`registry-kit verify (dry run): filesystem ${root}`);
    expect(dry.lines).toContain(`mismatch ${bad}: its 15 bytes hash to ${sha256("layer that r0ts")}; would be quarantined`);
    expect(await present(blobFile(root, bad))).toBe(true);
    expect(await present(path.join(root, "quarantine"))).toBe(false);

    const real = io();
    expect(await main(["verify", "--quarantine"], real)).toBe(1);
    const line = real.lines.find((l) => l.startsWith(`mismatch ${bad}`));
    const key = /; quarantined as (quarantine\/\S+)$/.exec(line ?? "")?.[1];
    expect(key).toMatch(new RegExp(`^quarantine/sha256/${bad.slice(7)}/\\d{8}T\\d{6}\\.\\d{3}Z-[0-9a-f]{8}/data$`));
    expect(real.lines.at(-1)).toBe("checked 2 blobs, 25 bytes (25 B); mismatches 1, quarantined 1, unreadable 0, vanished during the run 0");
    expect(await present(blobFile(root, bad))).toBe(false);
    expect(await readFile(path.join(root, key!), "utf8")).toBe("layer that r0ts");
    expect(await present(blobFile(root, good))).toBe(true);

    const clean = io();
    expect(await main(["verify", "--quarantine"], clean)).toBe(0);
    expect(clean.lines.at(-1)).toBe("checked 1 blobs, 10 bytes (10 B); all verify");
  });

  it("--json prints the report as one JSON document, with the same exit code", async () => {
    const root = path.join(data, "registry");
    const { bad } = await seed(root);
    const out = io();
    expect(await main(["verify", "--json", "--concurrency=1"], out)).toBe(1);
    expect(out.lines).toHaveLength(1);
    expect(JSON.parse(out.lines[0]!)).toEqual({
      storage: `filesystem ${root}`,
      dryRun: false,
      quarantine: false,
      checked: 2,
      bytes: 25,
      mismatches: [{ digest: bad, actualDigest: sha256("layer that r0ts"), size: 15 }],
      quarantined: 0,
      vanished: 0,
      errors: [],
      aborted: false,
    });
  });

  it("bad usage exits 2; a configuration it cannot use exits 3", async () => {
    for (const args of [["--bogus"], ["--concurrency=0"], ["--concurrency=x"], ["a.yml", "b.yml"]]) {
      const bad = io();
      expect(await main(["verify", ...args], bad)).toBe(2);
      expect(bad.errors.join("\n")).toContain("Usage: registry-kit verify");
    }
    const help = io();
    expect(await main(["verify", "--help"], help)).toBe(0);
    expect(help.lines.join("\n")).toContain("Usage: registry-kit verify");

    const memory = io();
    await writeFile(path.join(data, "mem.yml"), "version: 0.1\nstorage:\n  inmemory: {}\n");
    expect(await main(["verify", path.join(data, "mem.yml")], memory)).toBe(3);
    expect(memory.errors).toEqual(["registry-kit verify: the configured storage is inmemory; there is nothing to verify"]);

    const missing = io();
    expect(await main(["verify", path.join(data, "nope.yml")], missing)).toBe(3);
    expect(missing.errors[0]).toMatch(/^registry-kit verify: configuration error: .*nope\.yml/);
  });

  it("runs as the real command on the CONFIG's filesystem storage: exit 1 with the mismatch, then exit 0 once quarantined", async () => {
    const root = path.join(data, "store");
    const { bad } = await seed(root);
    const configFile = path.join(data, "config.yml");
    await writeFile(configFile, `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${root}\n`);
    const run = async (args: string[]) => {
      const child = spawn(process.execPath, [BIN, "verify", ...args], { cwd: data, env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.stderr.on("data", (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      return { code, out, err };
    };

    const found = await run([configFile]);
    expect(found.err).toBe("");
    expect(found.code).toBe(1);
    expect(found.out).toContain(`registry-kit verify: filesystem ${root}\n`);
    expect(found.out).toContain(`mismatch ${bad}: its 15 bytes hash to ${sha256("layer that r0ts")}\n`);

    const quarantined = await run(["--quarantine", configFile]);
    expect(quarantined.code).toBe(1);
    expect(quarantined.out).toContain("mismatches 1, quarantined 1");
    expect(await readdir(path.join(root, "quarantine", "sha256"))).toEqual([bad.slice(7)]);

    const clean = await run([configFile]);
    expect(clean).toEqual({ code: 0, err: "", out: `registry-kit verify: filesystem ${root}\nchecked 1 blobs, 10 bytes (10 B); all verify\n` });
  });
});
