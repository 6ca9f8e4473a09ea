import { describe, expect, it } from "vitest";
import { immutableTags } from "../../src/registry/index.js";
import { allKeys, clockedStorage, HOUR } from "./clocked-storage.js";
import { pushImage, req, type Handler } from "./helpers.js";

const MINUTE = 60 * 1000;

/** Push `tags` of `name` one minute apart (each its own image); their manifest digests by tag. */
async function pushTags(registry: Handler, clock: { now: number }, name: string, tags: string[]): Promise<Map<string, { digest: string; layer: string }>> {
  const pushed = new Map<string, { digest: string; layer: string }>();
  for (const tag of tags) {
    clock.now += MINUTE;
    pushed.set(tag, await pushImage(registry, name, tag, `${name}-${tag}`));
  }
  return pushed;
}

async function tagList(registry: Handler, name: string): Promise<string[]> {
  const res = await registry(req("GET", `/v2/${name}/tags/list`));
  return res.status === 200 ? ((await res.json()) as { tags: string[] }).tags : [];
}

describe("retention in garbage collection", () => {
  it("keepLast keeps the newest tags by push time; the others go with their manifests and blobs", async () => {
    const { registry, clock, gc } = clockedStorage();
    const app = await pushTags(registry, clock, "app", ["v1", "v2", "v3", "v4", "v5"]);
    // Pushing v1 again makes it the newest.
    clock.now += MINUTE;
    await pushImage(registry, "app", "v1", "app-v1");
    await pushTags(registry, clock, "other", ["a", "b"]);
    clock.now += 2 * HOUR;
    const report = await gc({ retention: [{ repositories: "app", keepLast: 2 }] });
    expect(report.tags.removed.sort()).toEqual(["app:v2", "app:v3", "app:v4"]);
    expect(await tagList(registry, "app")).toEqual(["v1", "v5"]);
    expect(await tagList(registry, "other")).toEqual(["a", "b"]);
    expect(report.manifests.removed.sort()).toEqual(["v2", "v3", "v4"].map((t) => `app@${app.get(t)!.digest}`).sort());
    for (const tag of ["v2", "v3", "v4"]) {
      expect(report.blobs.removed).toContain(app.get(tag)!.layer);
      expect((await registry(req("GET", `/v2/app/manifests/${app.get(tag)!.digest}`))).status).toBe(404);
    }
    expect((await registry(req("GET", "/v2/app/manifests/v5"))).status).toBe(200);
  });

  it("olderThanSeconds keeps recent tags, tags keeps matching ones, several rules keep the union", async () => {
    const { registry, clock, gc } = clockedStorage();
    await pushTags(registry, clock, "team/api", ["release-1", "old-1", "old-2"]);
    clock.now += 2 * HOUR;
    await pushTags(registry, clock, "team/api", ["new-1", "new-2"]);
    clock.now += 10 * MINUTE;
    const report = await gc({
      retention: [
        { repositories: "team/*", olderThanSeconds: 3600 },
        { repositories: ["nothing", "team/api"], tags: ["release-*"] },
      ],
    });
    expect(report.tags.removed.sort()).toEqual(["team/api:old-1", "team/api:old-2"]);
    expect(await tagList(registry, "team/api")).toEqual(["new-1", "new-2", "release-1"]);
  });

  it("never removes a protected (immutable) tag", async () => {
    const { registry, clock, gc } = clockedStorage();
    await pushTags(registry, clock, "app", ["v1", "v2", "latest"]);
    clock.now += 2 * HOUR;
    const report = await gc({ retention: [{ repositories: "*", keepLast: 0, tags: "nothing" }], protectTag: immutableTags(["v*"]).protects });
    expect(report.tags.removed).toEqual(["app:latest"]);
    expect(await tagList(registry, "app")).toEqual(["v1", "v2"]);
  });

  it("a dry run lists the tags, manifests and blobs that would go and changes nothing", async () => {
    const { storage, registry, clock, gc } = clockedStorage();
    const app = await pushTags(registry, clock, "app", ["v1", "v2", "v3"]);
    clock.now += 2 * HOUR;
    const before = await allKeys(storage);
    const dry = await gc({ dryRun: true, retention: [{ repositories: "app", keepLast: 1 }] });
    expect(await allKeys(storage)).toEqual(before);
    expect(dry.tags.removed.sort()).toEqual(["app:v1", "app:v2"]);
    expect(dry.manifests.removed.sort()).toEqual([`app@${app.get("v1")!.digest}`, `app@${app.get("v2")!.digest}`].sort());
    expect(dry.blobs.removed).toEqual(expect.arrayContaining([app.get("v1")!.layer, app.get("v2")!.layer]));
    const real = await gc({ retention: [{ repositories: "app", keepLast: 1 }] });
    expect(real.tags.removed.sort()).toEqual(dry.tags.removed.sort());
    expect(real.manifests.removed.sort()).toEqual(dry.manifests.removed.sort());
    expect(real.blobs.removed.sort()).toEqual(dry.blobs.removed.sort());
  });

  it("a manifest younger than the grace period stays (its tag goes); a repository emptied by retention leaves the catalog", async () => {
    const { registry, clock, gc } = clockedStorage();
    const app = await pushTags(registry, clock, "app", ["v1", "v2"]);
    await pushTags(registry, clock, "keep", ["v1"]);
    const first = await gc({ retention: [{ repositories: "app", tags: "none" }] });
    expect(first.tags.removed.sort()).toEqual(["app:v1", "app:v2"]);
    expect(first.manifests.removed).toEqual([]);
    expect((await registry(req("GET", `/v2/app/manifests/${app.get("v1")!.digest}`))).status).toBe(200);
    clock.now += 2 * HOUR;
    const second = await gc({ retention: [{ repositories: "app", tags: "none" }] });
    expect(second.manifests.removed).toHaveLength(2);
    const catalog = (await (await registry(req("GET", "/v2/_catalog"))).json()) as { repositories: string[] };
    expect(catalog.repositories).toEqual(["keep"]);
  });

  it("refuses a rule that keeps nothing by any criterion, or is malformed", async () => {
    const { gc } = clockedStorage();
    await expect(gc({ retention: [{ repositories: "app" }] })).rejects.toThrow(/retention rule 0: give at least one of keepLast, olderThanSeconds, tags/);
    await expect(gc({ retention: [{ repositories: [], keepLast: 1 }] })).rejects.toThrow(/repositories must name at least one glob/);
    await expect(gc({ retention: [{ repositories: "a", keepLast: -1 }] })).rejects.toThrow(/keepLast must be a whole number/);
  });
});
