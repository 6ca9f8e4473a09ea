/**
 * `registry-kit gc --remove-untagged` killed at random points: whatever it had
 * removed so far, the data directory stays consistent (no link to a missing
 * blob, no tag or referrer without its revision, no manifest missing a blob),
 * every tagged image stays complete, and a final run finishes the job.
 * 4 kills in `npm test`; 30 with CRASH_TRIALS set, or CRASH_GC_TRIALS=n.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { collectGarbage, createRegistry } from "../../src/registry/index.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { checkDisk, emptyFigures } from "./check.js";
import { kill, started } from "./server.js";
import { sha256 } from "./workload.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
const KILLS = Number(process.env.CRASH_GC_TRIALS ?? (process.env.CRASH_TRIALS ? 30 : 4));
let data = "";

afterAll(async () => {
  for (const child of [...started]) await kill(child);
  if (data) await rm(data, { recursive: true, force: true });
});

async function seed(root: string, generation: number): Promise<{ tagged: { repo: string; tag: string; blobs: string[] }[]; garbage: number }> {
  const storage = fsStorage({ root, fsync: false });
  const registry = createRegistry({ storage, uploadSecret: "s", deleteEnabled: true });
  const call = (method: string, p: string, body?: string, type?: string) =>
    registry(new Request(`http://x${p}`, { method, ...(body !== undefined ? { body } : {}), ...(type ? { headers: { "content-type": type } } : {}) }));
  const tagged: { repo: string; tag: string; blobs: string[] }[] = [];
  let garbage = 0;
  for (let r = 0; r < 3; r++) {
    const repo = `gc/g${generation}r${r}`;
    for (let i = 0; i < 12; i++) {
      const blobs: string[] = [];
      for (const content of [`config ${generation} ${r} ${i}`, `layer ${generation} ${r} ${i}`, `shared ${i % 3}`, `more ${r} ${i}`]) {
        const digest = sha256(content);
        expect((await call("POST", `/v2/${repo}/blobs/uploads/?digest=${digest}`, content)).status).toBe(201);
        blobs.push(digest);
      }
      const manifest = JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: blobs[0], size: `config ${generation} ${r} ${i}`.length },
        layers: blobs.slice(1).map((digest) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar", digest, size: 10 })),
      });
      const tag = `t${i}`;
      expect((await call("PUT", `/v2/${repo}/manifests/${tag}`, manifest, "application/vnd.oci.image.manifest.v1+json")).status).toBe(201);
      if (i % 3 === 0) {
        expect((await call("DELETE", `/v2/${repo}/manifests/${sha256(manifest)}`)).status).toBe(202);
        garbage++;
      } else if (i % 3 === 1) {
        expect((await call("DELETE", `/v2/${repo}/manifests/${tag}`)).status).toBe(202); // untagged
        garbage++;
      } else tagged.push({ repo, tag, blobs });
    }
    for (let i = 0; i < 20; i++) {
      const content = `orphan ${generation} ${r} ${i}`;
      expect((await call("POST", `/v2/${repo}/blobs/uploads/?digest=${sha256(content)}`, content)).status).toBe(201);
    }
  }
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
  return { tagged, garbage };
}

/** Files under `root/<under>` whose path contains `part`. */
async function countFiles(root: string, part: string, under: string): Promise<number> {
  const names = await readdir(path.join(root, under), { recursive: true }).catch(() => [] as string[]);
  return names.filter((n) => `/${n}`.includes(part) && (part !== "/data" || n.endsWith("data"))).length;
}

describe("gc killed at random points", () => {
  it(`leaves a consistent registry after ${KILLS} kills, and a last run completes`, { timeout: 60_000 + KILLS * 10_000 }, async () => {
    data = await mkdtemp(path.join(tmpdir(), "rk-gc-crash-"));
    const root = path.join(data, "registry");
    const tagged = (await seed(root, 0)).tagged;
    const figures = emptyFigures();
    let killedMidway = 0;
    let generation = 0;
    for (let i = 0; i < KILLS; i++) {
      const blobsBefore = await countFiles(root, "/data", "blobs");
      const child = spawn(process.execPath, [BIN, "gc", "--remove-untagged"], {
        cwd: data, env: { ...process.env, REGISTRY_KIT_DATA: data }, stdio: ["ignore", "pipe", "pipe"],
      });
      started.add(child);
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
      // Kill once it has removed a random number of revisions or blobs (start-up takes most of a
      // second, so a timer alone would mostly hit it before the sweep), or at a random time.
      const mode = i % 3;
      const target = 1 + Math.floor(Math.random() * (mode === 0 ? 4 : 25));
      const before = await countFiles(root, mode === 0 ? "/_manifests/revisions/" : "/data", mode === 0 ? "repositories" : "blobs");
      const deadline = Date.now() + (mode === 2 ? 400 + Math.random() * 1200 : 10_000);
      while (child.exitCode === null && Date.now() < deadline) {
        if (mode !== 2 && before - (await countFiles(root, mode === 0 ? "/_manifests/revisions/" : "/data", mode === 0 ? "repositories" : "blobs")) >= target) break;
        await Promise.race([exited, new Promise((r) => setTimeout(r, 2))]);
      }
      const finished = child.exitCode !== null;
      await kill(child);
      started.delete(child);
      const completed = finished && out.includes("bytes freed");
      if (!completed && (await countFiles(root, "/data", "blobs")) < blobsBefore) killedMidway++;
      expect(await checkDisk(data, figures)).toEqual([]);
      // Garbage all gone: make more, so that every run has something to be killed in.
      if (completed) tagged.push(...(await seed(root, ++generation)).tagged);
    }
    const storage = fsStorage({ root, fsync: false });
    const last = await collectGarbage(storage, { removeUntagged: true });
    expect(await checkDisk(data, figures)).toEqual([]);
    // Nothing garbage is left: a further run removes nothing.
    const again = await collectGarbage(storage, { removeUntagged: true, dryRun: true });
    expect(again.blobs.removed).toEqual([]);
    expect(again.manifests.removed).toEqual([]);
    // Every tagged image is whole.
    for (const image of tagged) {
      expect(await storage.stat(`repositories/${image.repo}/_manifests/tags/${image.tag}`)).toBeDefined();
      for (const blob of image.blobs) {
        expect(await storage.stat(`blobs/sha256/${blob.slice(7, 9)}/${blob.slice(7)}/data`)).toBeDefined();
        expect(await storage.stat(`repositories/${image.repo}/_layers/sha256/${blob.slice(7)}`)).toBeDefined();
      }
    }
    await storage.close?.();
    console.log(`gc crash: ${KILLS} runs, ${killedMidway} killed in the middle of removing blobs, ${generation} re-seeds; last run removed ` +
      `${last.manifests.removed.length} manifests, ${last.blobs.removed.length} blobs; ${figures.blobsHashed} blob objects hashed`);
  });
});
