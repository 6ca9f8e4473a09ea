import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../src/storage/memory/index.js";
import type { RedirectOptions, StorageDriver } from "../../src/storage/driver.js";
import { errorCode, makeRegistry, pushBlob, req } from "./helpers.js";

/** A memory driver that also hands out (fake) redirect URLs, recording each call. */
function redirecting(answer: (key: string) => string | undefined = (key) => `https://store.example/${key}?sig=1`) {
  const calls: Array<{ key: string; options: RedirectOptions | undefined }> = [];
  const inner = memoryStorage();
  const driver: StorageDriver = {
    ...inner,
    name: inner.name,
    redirectURL: async (key, options) => (calls.push({ key, options }), answer(key)),
  };
  return { driver, calls };
}

describe("blob GET redirects (storage.redirect)", () => {
  it("answers a GET with 307 to the driver's URL for the blob's data, with the digest headers and no body", async () => {
    const { driver, calls } = redirecting();
    const registry = makeRegistry({ storage: driver });
    const digest = await pushBlob(registry, "r", "redirected bytes");
    const response = await registry(req("GET", `/v2/r/blobs/${digest}`));
    expect(response.status).toBe(307);
    const hex = digest.slice("sha256:".length);
    expect(response.headers.get("location")).toBe(`https://store.example/blobs/sha256/${hex.slice(0, 2)}/${hex}/data?sig=1`);
    expect(response.headers.get("docker-content-digest")).toBe(digest);
    expect(response.body).toBeNull();
    expect(calls).toEqual([{ key: calls[0]!.key, options: { expiresInSeconds: 1200 } }]);
  });

  it("redirects a ranged GET too (the client sends its Range to the URL)", async () => {
    const { driver } = redirecting();
    const registry = makeRegistry({ storage: driver });
    const digest = await pushBlob(registry, "r", "0123456789");
    const response = await registry(req("GET", `/v2/r/blobs/${digest}`, { headers: { range: "bytes=2-5" } }));
    expect(response.status).toBe(307);
  });

  it("never redirects a HEAD", async () => {
    const { driver, calls } = redirecting();
    const registry = makeRegistry({ storage: driver });
    const digest = await pushBlob(registry, "r", "head only");
    const head = await registry(req("HEAD", `/v2/r/blobs/${digest}`));
    expect(head.status).toBe(200);
    expect(head.headers.get("location")).toBeNull();
    expect(head.headers.get("content-length")).toBe("9");
    expect(calls).toEqual([]);
  });

  it("serves the bytes itself with redirect: false, or when the driver has no URL for the blob", async () => {
    const off = redirecting();
    const registry = makeRegistry({ storage: off.driver, redirect: false });
    const digest = await pushBlob(registry, "r", "served here");
    const served = await registry(req("GET", `/v2/r/blobs/${digest}`));
    expect(served.status).toBe(200);
    expect(await served.text()).toBe("served here");
    expect(off.calls).toEqual([]);

    const none = redirecting(() => undefined);
    const fallback = makeRegistry({ storage: none.driver });
    await pushBlob(fallback, "r", "served here");
    const response = await fallback(req("GET", `/v2/r/blobs/${digest}`));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("served here");
    expect(none.calls).toHaveLength(1);
  });

  it("hands out no URL for a blob that is not linked in the repository asked for", async () => {
    const { driver, calls } = redirecting();
    const registry = makeRegistry({ storage: driver });
    const digest = await pushBlob(registry, "owner/private", "secret layer");
    const response = await registry(req("GET", `/v2/other/repo/blobs/${digest}`));
    expect(response.status).toBe(404);
    expect(await errorCode(response)).toBe("BLOB_UNKNOWN");
    expect(calls).toEqual([]);
  });

  it("hands out no URL before authorization", async () => {
    const { driver, calls } = redirecting();
    const open = makeRegistry({ storage: driver });
    const digest = await pushBlob(open, "r", "guarded");
    const guarded = makeRegistry({ storage: driver, authorize: async () => new Response("no", { status: 401 }) });
    const response = await guarded(req("GET", `/v2/r/blobs/${digest}`));
    expect(response.status).toBe(401);
    expect(response.headers.get("location")).toBeNull();
    expect(calls).toEqual([]);
  });

  it("does not stat the blob on the redirect path, and answers BLOB_UNKNOWN when the driver finds no data to point at", async () => {
    const inner = memoryStorage();
    const stats: string[] = [];
    const driver: StorageDriver = {
      ...inner,
      name: inner.name,
      stat: (key) => (stats.push(key), inner.stat(key)),
      redirectURL: async (key) => ((await inner.stat(key)) ? `https://store.example/${key}` : undefined),
    };
    const registry = makeRegistry({ storage: driver });
    const digest = await pushBlob(registry, "r", "data");
    stats.length = 0;
    expect((await registry(req("GET", `/v2/r/blobs/${digest}`))).status).toBe(307);
    expect(stats.filter((k) => k.endsWith("/data"))).toEqual([]);
    const hex = digest.slice("sha256:".length);
    await inner.delete(`blobs/sha256/${hex.slice(0, 2)}/${hex}/data`);
    const gone = await registry(req("GET", `/v2/r/blobs/${digest}`));
    expect(gone.status).toBe(404);
    expect(await errorCode(gone)).toBe("BLOB_UNKNOWN");
  });

  it("passes the configured lifetime, and refuses an invalid one at construction", async () => {
    const { driver, calls } = redirecting();
    const registry = makeRegistry({ storage: driver, redirect: { expiresInSeconds: 60 } });
    const digest = await pushBlob(registry, "r", "x");
    await registry(req("GET", `/v2/r/blobs/${digest}`));
    expect(calls[0]!.options).toEqual({ expiresInSeconds: 60 });
    expect(() => makeRegistry({ storage: driver, redirect: { expiresInSeconds: 0 } })).toThrow(/expiresInSeconds/);
  });
});
