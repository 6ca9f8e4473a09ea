/**
 * An upload left open by a SIGKILL is removed by the server's periodic purge
 * (storage.maintenance.uploadpurging, here with a 1 s age and interval), its
 * caller index entry too, and what was committed before the kill stays.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { kill, spawnServer, started } from "./server.js";
import { Api, newModel, sha256 } from "./workload.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const child of [...started]) await kill(child);
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const PURGE = {
  REGISTRY_STORAGE_MAINTENANCE_UPLOADPURGING_AGE: "1s",
  REGISTRY_STORAGE_MAINTENANCE_UPLOADPURGING_INTERVAL: "1s",
  REGISTRY_LOG_LEVEL: "info",
};

async function sessionsOnDisk(data: string, repo: string): Promise<string[]> {
  return readdir(join(data, "registry/repositories", repo, "_uploads")).catch(() => []);
}
async function indexOnDisk(data: string): Promise<string[]> {
  const root = join(data, "registry/uploads/callers");
  const out: string[] = [];
  for (const caller of await readdir(root).catch(() => [])) out.push(...(await readdir(join(root, caller))));
  return out;
}

it("an upload open at a SIGKILL is purged after the restart; committed blobs stay", { timeout: 60_000 }, async () => {
  const data = await mkdtemp(join(tmpdir(), "rk-abandoned-"));
  dirs.push(data);
  const model = newModel(1, 0);
  const repo = model.repos[0]!.name;

  // First life: commit one blob, leave one upload half-written, and die.
  const first = spawnServer(data, PURGE);
  const server = await first.ready;
  const api = await Api.connect(server.url, model);
  const kept = new TextEncoder().encode("committed before the kill");
  expect((await api.fetch(`/v2/${repo}/blobs/uploads/?digest=${sha256(kept)}`, { method: "POST", body: kept })).status).toBe(201);
  const post = await api.fetch(`/v2/${repo}/blobs/uploads/`, { method: "POST" });
  expect(post.status).toBe(202);
  const patch = await api.fetch(new URL(post.headers.get("location")!, server.url).pathname + new URL(post.headers.get("location")!).search, {
    method: "PATCH", body: new Uint8Array(1000), headers: { "content-type": "application/octet-stream" },
  });
  expect(patch.status).toBe(202);
  await kill(first.child);
  expect(await sessionsOnDisk(data, repo)).toHaveLength(1);
  expect(await indexOnDisk(data)).toHaveLength(1);

  // Second life: the purge runs at start and every second; the session is 1 s idle soon.
  const second = spawnServer(data, PURGE);
  const again = await second.ready;
  const deadline = Date.now() + 20_000;
  // The log line is written after the removal: wait for both.
  while (((await sessionsOnDisk(data, repo)).length > 0 || !/upload purge/.test(again.output())) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(await sessionsOnDisk(data, repo)).toEqual([]);
  expect(await indexOnDisk(data)).toEqual([]);
  expect(again.output()).toMatch(/upload purge removed=1 bytes=1000/);
  const api2 = await Api.connect(again.url, model);
  const blob = await api2.fetch(`/v2/${repo}/blobs/${sha256(kept)}`);
  expect(blob.status).toBe(200);
  expect(new TextDecoder().decode(await blob.arrayBuffer())).toBe("committed before the kill");
  await kill(second.child);
});
