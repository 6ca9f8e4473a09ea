/**
 * `registry-kit gc`: in-process through `main()` (the same config resolution as
 * `serve`), and once as the real command (`node bin/registry-kit.mjs gc`).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
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
  data = await mkdtemp(path.join(tmpdir(), "rk-gc-"));
});
afterEach(async () => {
  await rm(data, { recursive: true, force: true });
});

function io(env: Record<string, string> = {}): CliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), env: { REGISTRY_KIT_DATA: data, ...env }, cwd: data };
}

/** Push an image and an orphan blob into `root`, then age every file by two hours. */
async function seed(root: string): Promise<{ orphan: string; layer: string }> {
  const storage = fsStorage({ root, fsync: false });
  const registry = createRegistry({ storage, uploadSecret: "s" });
  const put = async (name: string, body: string): Promise<string> => {
    const digest = sha256(body);
    const res = await registry(new Request(`http://x/v2/${name}/blobs/uploads/?digest=${digest}`, { method: "POST", body }));
    expect(res.status).toBe(201);
    return digest;
  };
  const config = JSON.stringify({ architecture: "amd64", os: "linux" });
  const configDigest = await put("app", config);
  const layer = await put("app", "layer bytes");
  const orphan = await put("app", "orphan bytes!");
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: configDigest, size: config.length },
    layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: layer, size: 11 }],
  });
  const res = await registry(new Request("http://x/v2/app/manifests/v1", {
    method: "PUT", body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
  }));
  expect(res.status).toBe(201);
  await storage.close?.();
  const old = new Date(Date.now() - 2 * 3600 * 1000);
  const age = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await age(full);
      else await utimes(full, old, old);
    }
  };
  await age(root);
  return { orphan, layer };
}

const blobFile = (root: string, digest: string) => {
  const hex = digest.slice("sha256:".length);
  return path.join(root, "blobs", "sha256", hex.slice(0, 2), hex, "data");
};
const present = (file: string) => stat(file).then(() => true, () => false);

describe("registry-kit gc", () => {
  it("uses serve's default data directory: --dry-run reports, then gc removes and prints the bytes freed", async () => {
    const root = path.join(data, "registry");
    const { orphan, layer } = await seed(root);

    const dry = io();
    expect(await main(["gc", "--dry-run"], dry)).toBe(0);
    expect(dry.lines[0]).toBe(`registry-kit gc (dry run): filesystem ${root}`);
    expect(dry.lines).toContain(`would remove blob ${orphan}`);
    expect(dry.lines.at(-1)).toBe("bytes that would be freed: 13 (13 B)");
    expect(await present(blobFile(root, orphan))).toBe(true);

    const real = io();
    expect(await main(["gc"], real)).toBe(0);
    expect(real.lines).toContain(`removed blob ${orphan}`);
    expect(real.lines.some((l) => l.startsWith("removed: 0 tags, 0 manifests, 1 blobs (1 links), 0 uploads"))).toBe(true);
    expect(real.lines.at(-1)).toBe("bytes freed: 13 (13 B)");
    expect(await present(blobFile(root, orphan))).toBe(false);
    expect(await present(blobFile(root, layer))).toBe(true);
    expect(real.errors).toEqual([]);
  });

  it("reads the same CONFIG as serve, and --remove-untagged removes an untagged image", async () => {
    const root = path.join(data, "elsewhere");
    const { layer } = await seed(root);
    // untag v1
    await rm(path.join(root, "repositories", "app", "_manifests", "tags", "v1"));
    const configFile = path.join(data, "config.yml");
    await writeFile(configFile, `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${root}\n`);

    const plain = io();
    expect(await main(["gc", configFile], plain)).toBe(0);
    expect(await present(blobFile(root, layer))).toBe(true);

    const untagged = io();
    expect(await main(["gc", "--remove-untagged", configFile], untagged)).toBe(0);
    expect(untagged.lines.filter((l) => l.startsWith("removed manifest app@sha256:"))).toHaveLength(1);
    expect(untagged.lines).toContain(`removed blob ${layer}`);
    expect(await present(blobFile(root, layer))).toBe(false);
  });

  it("--grace-period protects young blobs; bad usage exits 2; inmemory storage exits 1", async () => {
    const root = path.join(data, "registry");
    const { orphan } = await seed(root);
    const young = io();
    expect(await main(["gc", "--grace-period=86400"], young)).toBe(0);
    expect(young.lines.some((l) => l.includes("kept 1 unreferenced blobs younger than the grace period"))).toBe(true);
    expect(await present(blobFile(root, orphan))).toBe(true);

    const bad = io();
    expect(await main(["gc", "--bogus"], bad)).toBe(2);
    expect(bad.errors.join("\n")).toContain("Usage: registry-kit gc");

    const memory = io();
    const configFile = path.join(data, "mem.yml");
    await writeFile(configFile, "version: 0.1\nstorage:\n  inmemory: {}\n");
    expect(await main(["gc", configFile], memory)).toBe(1);
  });

  it("runs as the real command and exits 0", async () => {
    const root = path.join(data, "registry");
    const { orphan } = await seed(root);
    const child = spawn(process.execPath, [BIN, "gc"], {
      cwd: data,
      env: { ...process.env, REGISTRY_KIT_DATA: data },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain(`removed blob ${orphan}`);
    expect(out).toContain("bytes freed: 13 (13 B)");
  });
});

describe("registry-kit gc with storage.s3", () => {
  it("opens the configured S3 store (not the filesystem): an unreachable endpoint fails the run with exit 1", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "rk-gc-s3-"));
    try {
      const file = path.join(dir, "config.yml");
      await writeFile(file, [
        "version: 0.1",
        "storage:",
        "  s3:",
        "    bucket: gc-bucket",
        "    region: us-east-1",
        "    regionendpoint: http://127.0.0.1:1",
        "    forcepathstyle: true",
        "    accesskey: AKIDEXAMPLE",
        "    secretkey: secret-example-secret-example",
        "",
      ].join("\n"));
      const out = io();
      const code = await main(["gc", "--dry-run", file], out);
      expect(code).toBe(1);
      expect(out.errors.join("\n")).toContain("registry-kit gc: failed");
      expect(out.errors.join("\n")).not.toContain("inmemory");
      expect(out.errors.join("\n")).not.toContain("secret-example");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("registry-kit gc --expire-cached", () => {
  it("expires tags of pull-through repositories not confirmed for the given seconds and frees their content; local repositories stay", async () => {
    const root = path.join(data, "cache");
    const { layer } = await seed(root);
    const local = path.join(data, "local.yml");
    await writeFile(local, `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${root}\nregistrykit:\n  proxy:\n    upstreams:\n      - prefix: hub/\n        remoteurl: http://127.0.0.1:9\n`);
    const untouched = io();
    expect(await main(["gc", "--expire-cached=3600", local], untouched)).toBe(0);
    expect(untouched.lines.filter((l) => l.includes("cached tag"))).toEqual([]);
    expect(await present(blobFile(root, layer))).toBe(true);

    const proxied = path.join(data, "proxied.yml");
    await writeFile(proxied, `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${root}\nproxy:\n  remoteurl: http://127.0.0.1:9\n`);
    const young = io();
    expect(await main(["gc", "--expire-cached=10800", proxied], young)).toBe(0);
    expect(young.lines.filter((l) => l.includes("cached tag"))).toEqual([]);

    const dry = io();
    expect(await main(["gc", "--dry-run", "--expire-cached=3600", proxied], dry)).toBe(0);
    expect(dry.lines).toContain("would expire cached tag app:v1");
    expect(await present(blobFile(root, layer))).toBe(true);

    const real = io();
    expect(await main(["gc", "--expire-cached=3600", proxied], real)).toBe(0);
    expect(real.lines).toContain("expired cached tag app:v1");
    expect(real.lines).toContain(`removed blob ${layer}`);
    expect(await present(blobFile(root, layer))).toBe(false);

    const without = io();
    const plain = path.join(data, "plain.yml");
    await writeFile(plain, `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${root}\n`);
    expect(await main(["gc", "--expire-cached=1", plain], without)).toBe(1);
    expect(without.errors.join("\n")).toContain("needs a pull-through cache");
  });
});
