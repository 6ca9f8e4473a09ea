/**
 * Issue 41, item 8: the events of one request share one `request.id` (a
 * DELETE by digest with its per-tag deletes, as Distribution sends them), and
 * pull events carry `target.references` as push events do: always for
 * `onEvent` functions, with `includeReferences` in webhook envelopes.
 */
import { describe, expect, it } from "vitest";
import type { RegistryEvent } from "../../src/events/index.js";
import { createNotifier } from "../../src/events/notifier.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { makeRegistry, pushBlob, pushImage, req } from "../registry/helpers.js";

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

/** A notifier on memory storage whose POSTs land in `events` (answered 200). */
function capturingNotifier(includeReferences: boolean) {
  const events: RegistryEvent[] = [];
  const notifier = createNotifier({
    storage: memoryStorage(),
    endpoints: [{ name: "capture", url: "http://receiver.test/events" }],
    includeReferences,
    pullFlushMs: 20,
    post: async (_url, _headers, body) => {
      events.push(...(JSON.parse(new TextDecoder().decode(body)) as { events: RegistryEvent[] }).events);
      return 200;
    },
  });
  return { notifier, events };
}

/** Push `a:v1`, tag it `v2` too, pull it by tag and by digest, then DELETE it by digest (no X-Request-Id). */
async function scenario(registry: ReturnType<typeof makeRegistry>) {
  const image = await pushImage(registry, "a", "v1");
  const tagged = await registry(req("PUT", "/v2/a/manifests/v2", { body: image.manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
  expect(tagged.status).toBe(201);
  for (const ref of ["v1", image.digest]) {
    const get = await registry(req("GET", `/v2/a/manifests/${ref}`));
    expect(get.status).toBe(200);
    await get.arrayBuffer();
  }
  expect((await registry(req("DELETE", `/v2/a/manifests/${image.digest}`))).status).toBe(202);
  return image;
}

/** The events of the DELETE by digest: the delete by digest, one per tag, repository.emptied (functions only). */
function deleteEvents(events: RegistryEvent[]): RegistryEvent[] {
  const first = events.findIndex((e) => e.action === "delete");
  return events.slice(first);
}

describe("one request, one request.id", () => {
  it("a DELETE by digest gives its delete events (and repository.emptied) one request.id; other requests get others", async () => {
    const events: RegistryEvent[] = [];
    const registry = makeRegistry({ deleteEnabled: true, onEvent: (e) => void events.push(e) });
    await scenario(registry);
    await until(() => events.some((e) => e.action === "repository.emptied"));
    const deleted = deleteEvents(events);
    expect(deleted.map((e) => `${e.action} ${e.target.tag ?? e.target.digest ?? e.target.repository}`).sort()).toEqual(
      [`delete ${deleted[0]!.target.digest}`, "delete v1", "delete v2", "repository.emptied a"].sort(),
    );
    expect(new Set(deleted.map((e) => e.request!.id)).size).toBe(1);
    // A blob upload's last PUT: repository.created and push, one request.
    const created = events.findIndex((e) => e.action === "repository.created");
    expect(events[created + 1]!.action).toBe("push");
    expect(events[created + 1]!.request!.id).toBe(events[created]!.request!.id);
    // Each request its own id: the pulls, the uploads, the DELETE.
    const ids = events.filter((e) => e.action === "pull" || e.action === "upload.started").map((e) => e.request!.id);
    expect(new Set([...ids, deleted[0]!.request!.id]).size).toBe(ids.length + 1);
  });

  it("the client's X-Request-Id is every event's request.id", async () => {
    const events: RegistryEvent[] = [];
    const registry = makeRegistry({ deleteEnabled: true, onEvent: (e) => void events.push(e) });
    const image = await pushImage(registry, "a", "v1");
    expect((await registry(req("DELETE", `/v2/a/manifests/${image.digest}`, { headers: { "x-request-id": "client-7" } }))).status).toBe(202);
    await until(() => events.some((e) => e.action === "repository.emptied"));
    expect(deleteEvents(events).map((e) => e.request!.id)).toEqual(["client-7", "client-7", "client-7"]);
  });

  it("in webhook envelopes (the notifier alone: events written from their parts) too", async () => {
    const { notifier, events } = capturingNotifier(false);
    const registry = makeRegistry({ deleteEnabled: true, onEvent: notifier });
    await scenario(registry);
    await notifier.flush();
    await notifier.deliverOnce();
    const deleted = events.filter((e) => e.action === "delete");
    expect(deleted).toHaveLength(3);
    expect(new Set(deleted.map((e) => e.request!.id)).size).toBe(1);
    const pulls = events.filter((e) => e.action === "pull");
    expect(pulls).toHaveLength(2);
    expect(new Set([...pulls.map((e) => e.request!.id), deleted[0]!.request!.id]).size).toBe(3);
    await notifier.close();
  });
});

describe("pull events carry references", () => {
  it("an onEvent function gets a manifest pull's references, as its push's, by tag and by digest, cached or not", async () => {
    const events: RegistryEvent[] = [];
    const registry = makeRegistry({ deleteEnabled: true, onEvent: (e) => void events.push(e) });
    const image = await scenario(registry);
    await until(() => events.filter((e) => e.action === "pull").length === 2);
    const push = events.find((e) => e.action === "push" && e.target.digest === image.digest)!;
    expect(push.target.references).toHaveLength(2);
    for (const pull of events.filter((e) => e.action === "pull")) expect(pull.target.references).toEqual(push.target.references);
    // A blob pull has none (nor has a blob push).
    const blob = await registry(req("GET", `/v2/a/blobs/${image.layer}`));
    await blob.arrayBuffer();
    await until(() => events.filter((e) => e.action === "pull").length === 3);
    expect(events.filter((e) => e.action === "pull")[2]!.target.references).toBeUndefined();
  });

  it("with includeReferences, webhook pull events have references as push events do; without, neither has them", async () => {
    for (const includeReferences of [true, false]) {
      const { notifier, events } = capturingNotifier(includeReferences);
      const registry = makeRegistry({ deleteEnabled: true, onEvent: notifier });
      const image = await scenario(registry);
      await notifier.flush();
      await notifier.deliverOnce();
      const push = events.find((e) => e.action === "push" && e.target.digest === image.digest && e.target.tag === "v1")!;
      const pulls = events.filter((e) => e.action === "pull");
      expect(pulls).toHaveLength(2);
      if (includeReferences) {
        expect(push.target.references).toEqual([
          { mediaType: "application/vnd.oci.image.config.v1+json", digest: image.config, size: expect.any(Number) },
          { mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: image.layer, size: expect.any(Number) },
        ]);
        for (const pull of pulls) expect(pull.target.references).toEqual(push.target.references);
      } else {
        for (const e of [push, ...pulls]) expect(e.target.references).toBeUndefined();
      }
      await notifier.close();
    }
  });

  it("a pull of a manifest too large for the cache has its references too", async () => {
    const events: RegistryEvent[] = [];
    const registry = makeRegistry({ onEvent: (e) => void events.push(e) });
    const config = await pushBlob(registry, "big", JSON.stringify({ architecture: "amd64", os: "linux" }));
    const layer = await pushBlob(registry, "big", "layer");
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: config, size: 35 },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: layer, size: 5 }],
      annotations: { padding: "x".repeat(300 * 1024) },
    });
    expect((await registry(req("PUT", "/v2/big/manifests/v1", { body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }))).status).toBe(201);
    const get = await registry(req("GET", "/v2/big/manifests/v1"));
    expect(get.status).toBe(200);
    expect(await get.text()).toBe(manifest);
    await until(() => events.some((e) => e.action === "pull"));
    expect(events.find((e) => e.action === "pull")!.target.references).toEqual([
      { mediaType: "application/vnd.oci.image.config.v1+json", digest: config, size: 35 },
      { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: layer, size: 5 },
    ]);
  });
});
