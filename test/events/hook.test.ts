/**
 * The `onEvent` hook of the registry: which events a push, pull, mount and
 * delete produce, in Distribution's shape; a throwing or never-settling
 * listener neither fails nor holds up a request.
 */
import { describe, expect, it } from "vitest";
import type { RegistryEvent } from "../../src/events/index.js";
import { AWAITED, RECORD_PARTS, type PartsSink } from "../../src/events/hook.js";
import type { LogEvent } from "../../src/http/log.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { bytes, makeRegistry, pushBlob, pushImage, req, sha256 } from "../registry/helpers.js";

/** Wait until `check` holds (listeners run in a later task). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

describe("registry onEvent", () => {
  it("a push gives repository.created, upload.started and push per blob, then push of the manifest with its references", async () => {
    const events: RegistryEvent[] = [];
    const registry = makeRegistry({ onEvent: (e) => void events.push(e) });
    const image = await pushImage(registry, "team/app", "v1");
    await until(() => events.length === 6);
    expect(events.map((e) => `${e.action}${e.target.digest ? ` ${e.target.digest}` : ""}`)).toEqual([
      "upload.started",
      "repository.created",
      `push ${image.config}`,
      "upload.started",
      `push ${image.layer}`,
      `push ${image.digest}`,
    ]);
    const manifest = events[5]!;
    expect(manifest.target).toEqual({
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      digest: image.digest,
      size: bytes(image.manifest).byteLength,
      length: bytes(image.manifest).byteLength,
      repository: "team/app",
      url: `http://reg.test/v2/team/app/manifests/${image.digest}`,
      tag: "v1",
      references: [
        { mediaType: "application/vnd.oci.image.config.v1+json", digest: image.config, size: bytes(JSON.stringify({ architecture: "amd64", os: "linux", seed: "x" })).byteLength },
        { mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: image.layer, size: bytes("layer-bytes-x").byteLength },
      ],
    });
    expect(manifest.request).toMatchObject({ method: "PUT", host: "reg.test" });
    expect(manifest.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(events.map((e) => e.id)).size).toBe(6);
    expect(events[2]!.target).toMatchObject({ mediaType: "application/octet-stream", repository: "team/app", url: `http://reg.test/v2/team/app/blobs/${image.config}` });
  });

  it("pull, mount, tag and manifest delete, upload cancel", async () => {
    const events: RegistryEvent[] = [];
    const registry = makeRegistry({ deleteEnabled: true, onEvent: (e) => void events.push(e) });
    const image = await pushImage(registry, "a", "v1");
    await until(() => events.length === 6);
    events.length = 0;
    const get = await registry(req("GET", "/v2/a/manifests/v1", { headers: { "user-agent": "skopeo/1.0", "x-request-id": "r-1" } }));
    expect(get.status).toBe(200);
    await get.arrayBuffer();
    expect((await registry(req("HEAD", "/v2/a/manifests/v1"))).status).toBe(200);
    const blob = await registry(req("GET", `/v2/a/blobs/${image.layer}`));
    await blob.arrayBuffer();
    const mount = await registry(req("POST", `/v2/b/blobs/uploads/?mount=${image.layer}&from=a`));
    expect(mount.status).toBe(201);
    const start = await registry(req("POST", "/v2/a/blobs/uploads/"));
    expect((await registry(req("DELETE", start.headers.get("location")!))).status).toBe(204);
    expect((await registry(req("DELETE", "/v2/a/manifests/v1"))).status).toBe(202);
    expect((await registry(req("DELETE", `/v2/a/manifests/${image.digest}`))).status).toBe(202);
    await until(() => events.length === 9);
    // The last manifest of "a" is gone: it leaves the catalog (its blob links stay until garbage collection).
    expect(events.map((e) => e.action)).toEqual(["pull", "pull", "repository.created", "mount", "upload.started", "upload.cancelled", "delete", "delete", "repository.emptied"]);
    expect(events[8]!.target).toEqual({ repository: "a" });
    expect(events[0]!.target).toMatchObject({ digest: image.digest, tag: "v1", repository: "a" });
    expect(events[0]!.request).toMatchObject({ id: "r-1", useragent: "skopeo/1.0", method: "GET" });
    expect(events[3]!.target).toMatchObject({ digest: image.layer, repository: "b", fromRepository: "a", size: bytes("layer-bytes-x").byteLength });
    expect(events[6]!.target).toEqual({ repository: "a", tag: "v1" });
    expect(events[7]!.target).toEqual({ repository: "a", digest: image.digest });
  });

  it("pulls of a cached manifest by the same tag and URL share one frozen target; another tag, host or revision gets its own, with its own fields", async () => {
    const events: RegistryEvent[] = [];
    const registry = makeRegistry({ onEvent: (e) => void events.push(e) });
    const first = await pushImage(registry, "a", "v1");
    const tagged = await registry(req("PUT", "/v2/a/manifests/v2", { body: first.manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(tagged.status).toBe(201);
    await until(() => events.length === 7);
    events.length = 0;
    const get = async (path: string): Promise<void> => {
      const response = await registry(req("GET", path));
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    };
    await get("/v2/a/manifests/v1");
    await get("/v2/a/manifests/v1");
    await get("/v2/a/manifests/v2");
    await get("http://other.test/v2/a/manifests/v1");
    await get("/v2/a/manifests/v1");
    const second = await pushImage(registry, "a", "v1", "second"); // v1 now names another revision
    await get("/v2/a/manifests/v1");
    await until(() => events.filter((e) => e.action === "pull").length === 6);
    const pulls = events.filter((e) => e.action === "pull");
    expect(pulls.map((e) => `${e.target.tag} ${e.target.url}`)).toEqual([
      `v1 http://reg.test/v2/a/manifests/${first.digest}`,
      `v1 http://reg.test/v2/a/manifests/${first.digest}`,
      `v2 http://reg.test/v2/a/manifests/${first.digest}`,
      `v1 http://other.test/v2/a/manifests/${first.digest}`,
      `v1 http://reg.test/v2/a/manifests/${first.digest}`,
      `v1 http://reg.test/v2/a/manifests/${second.digest}`,
    ]);
    expect(pulls[5]!.target.digest).toBe(second.digest);
    expect(pulls[1]!.target).toBe(pulls[0]!.target);
    expect(Object.isFrozen(pulls[0]!.target)).toBe(true);
    expect(new Set(pulls.map((e) => e.target)).size).toBe(5);
    expect(new Set(pulls.map((e) => e.id)).size).toBe(6);
  });

  it("a blob GET answered with a redirect to the store is a pull too, without a size", async () => {
    const events: RegistryEvent[] = [];
    const inner = memoryStorage();
    const registry = makeRegistry({ storage: { ...inner, name: inner.name, redirectURL: async (key) => `https://store.example/${key}` }, onEvent: (e) => void events.push(e) });
    const digest = await pushBlob(registry, "r", "bytes");
    expect((await registry(req("GET", `/v2/r/blobs/${digest}`))).status).toBe(307);
    await until(() => events.length === 4);
    expect(events[3]).toMatchObject({ action: "pull", target: { digest, repository: "r", mediaType: "application/octet-stream", url: `http://reg.test/v2/r/blobs/${digest}` } });
    expect(events[3]!.target.size).toBeUndefined();
  });

  it("a throwing listener and a listener that never settles neither fail nor hold up requests; the failure is logged", async () => {
    const logged: LogEvent[] = [];
    let calls = 0;
    const registry = makeRegistry({
      log: (e) => void logged.push(e),
      onEvent: [
        () => {
          calls += 1;
          throw new Error("listener bug");
        },
        () => new Promise<void>(() => {}),
        async () => {
          throw new Error("async listener bug");
        },
      ],
    });
    const digest = await pushBlob(registry, "x", "hello");
    expect(digest).toBe(sha256("hello"));
    expect((await registry(req("GET", `/v2/x/blobs/${digest}`))).status).toBe(200);
    await until(() => logged.filter((e) => e.msg === "event listener failed").length === 8);
    expect(calls).toBe(4);
    expect(logged.some((e) => e.error === "async listener bug")).toBe(true);
  });

  it("a failing sink is logged and the request still succeeds", async () => {
    const logged: LogEvent[] = [];
    const registry = makeRegistry({ log: (e) => void logged.push(e), onEvent: { record: () => Promise.reject(new Error("disk gone")) } });
    await pushBlob(registry, "x", "hello");
    // A sink gets its events after the response (issue 41, item 7).
    await until(() => logged.length === 3);
    expect(logged.filter((e) => e.msg === "event sink failed: the event is lost").map((e) => e.action)).toEqual(["upload.started", "repository.created", "push"]);
  });

  it("a sink taking events as parts (the notifier's path) that throws or rejects is logged the same way, and the request still succeeds", async () => {
    const logged: LogEvent[] = [];
    let calls = 0;
    // Awaited before the response, as the notifier is.
    const throwing: PartsSink & { [AWAITED]: true } = {
      [AWAITED]: true,
      record: () => Promise.reject(new Error("not used")),
      [RECORD_PARTS]: () => {
        calls += 1;
        if (calls % 2 === 1) throw new Error("encoder bug");
        return Promise.reject(new Error("disk gone"));
      },
    };
    const registry = makeRegistry({ log: (e) => void logged.push(e), onEvent: throwing });
    await pushBlob(registry, "x", "hello");
    const failures = logged.filter((e) => e.msg === "event sink failed: the event is lost");
    expect(failures.map((e) => [e.action, e.error])).toEqual([["upload.started", "encoder bug"], ["repository.created", "disk gone"], ["push", "encoder bug"]]);
    expect(calls).toBe(3);
  });
});
