/**
 * `repository.emptied`: a repository that leaves the catalog says so, by each
 * way it can leave: its last manifest deleted by digest, garbage collection
 * removing its last manifest, and a whole-repository delete (with its counts
 * and the caller as the actor). Nothing when it still holds a manifest, in a
 * GC dry run, or when there was nothing to delete.
 */
import { describe, expect, it } from "vitest";
import type { RegistryEvent } from "../../src/events/index.js";
import { collectGarbage, deleteRepository } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { makeRegistry, pushImage, req } from "../registry/helpers.js";

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

async function catalog(registry: ReturnType<typeof makeRegistry>): Promise<string[]> {
  return ((await (await registry(req("GET", "/v2/_catalog"))).json()) as { repositories: string[] }).repositories;
}

describe("repository.emptied", () => {
  it("a manifest DELETE emits it only for the repository's last manifest, after the delete events", async () => {
    const events: RegistryEvent[] = [];
    const storage = memoryStorage();
    const registry = makeRegistry({ storage, deleteEnabled: true, onEvent: (e) => void events.push(e) });
    const first = await pushImage(registry, "team/app", "v1", "one");
    const second = await pushImage(registry, "team/app", "v2", "two");
    await until(() => events.length >= 11);
    events.length = 0;
    expect((await registry(req("DELETE", `/v2/team/app/manifests/${first.digest}`))).status).toBe(202);
    await until(() => events.length === 2);
    await new Promise((r) => setTimeout(r, 20));
    expect(events.map((e) => e.action)).toEqual(["delete", "delete"]);
    expect(await catalog(registry)).toEqual(["team/app"]);
    expect((await registry(req("DELETE", `/v2/team/app/manifests/${second.digest}`))).status).toBe(202);
    await until(() => events.length === 5);
    expect(events.slice(2).map((e) => `${e.action} ${e.target.digest ?? e.target.tag ?? ""}`.trim())).toEqual([`delete ${second.digest}`, "delete v2", "repository.emptied"]);
    expect(events[4]).toMatchObject({ target: { repository: "team/app" }, request: { method: "DELETE" } });
    expect(await catalog(registry)).toEqual([]);
  });

  it("garbage collection that removes a repository's last manifest emits it before gc.completed; a dry run does not", async () => {
    const storage = memoryStorage();
    const registry = makeRegistry({ storage, deleteEnabled: true });
    await pushImage(registry, "old/app", "v1", "old");
    await pushImage(registry, "kept/app", "v1", "kept");
    expect((await registry(req("DELETE", "/v2/old/app/manifests/v1"))).status).toBe(202);
    const dry: RegistryEvent[] = [];
    await collectGarbage(storage, { dryRun: true, removeUntagged: true, gracePeriodSeconds: 0, onEvent: { record: async (e) => void dry.push(e) } });
    // A sink gets its events after the call, in order (issue 41, item 7).
    await until(() => dry.length === 1);
    expect(dry.map((e) => e.action)).toEqual(["gc.completed"]);
    const events: RegistryEvent[] = [];
    await collectGarbage(storage, { removeUntagged: true, gracePeriodSeconds: 0, onEvent: { record: async (e) => void events.push(e) } });
    await until(() => events.length === 2);
    expect(events.map((e) => `${e.action} ${e.target.repository ?? ""}`.trim())).toEqual(["repository.emptied old/app", "gc.completed"]);
    expect(events[0]!.request).toBeUndefined();
    expect(await catalog(registry)).toEqual(["kept/app"]);
  });

  it("deleteRepository emits it with the counts and the caller; nothing for a repository that does not exist", async () => {
    const storage = memoryStorage();
    const registry = makeRegistry({ storage });
    await pushImage(registry, "team/app", "v1", "a");
    await pushImage(registry, "team/app", "v2", "b");
    const events: RegistryEvent[] = [];
    const onEvent = { record: async (e: RegistryEvent) => void events.push(e) };
    const report = await deleteRepository(storage, "team/app", { caller: "admin", onEvent });
    await until(() => events.length === 1);
    expect(events[0]).toMatchObject({ action: "repository.emptied", actor: { name: "admin" }, target: { repository: "team/app", report: { tags: 2, manifests: 2, links: report.links, uploads: 0 } } });
    expect(report.links).toBeGreaterThan(0);
    await deleteRepository(storage, "no/such", { onEvent });
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toHaveLength(1);
  });
});
