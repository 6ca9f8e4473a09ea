import { describe, expect, it } from "vitest";
import { errorCode, expectApiVersion, makeRegistry, pushBlob, req, sha256 } from "./helpers.js";

const CONTENT = "0123456789abcdefghij"; // 20 bytes

describe("blob GET and HEAD", () => {
  it("HEAD carries Content-Length and both digest headers, and no body", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    const head = await registry(req("HEAD", `/v2/r/blobs/${digest}`));
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("20");
    expect(head.headers.get("docker-content-digest")).toBe(digest);
    expect(head.headers.get("container-content-digest")).toBe(digest);
    expect(head.headers.get("etag")).toBe(`"${digest}"`);
    expectApiVersion(head);
    expect(head.body).toBeNull();
  });

  it("serves a byte range with 206 and Content-Range", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    const part = await registry(req("GET", `/v2/r/blobs/${digest}`, { headers: { range: "bytes=2-5" } }));
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 2-5/20");
    expect(part.headers.get("content-length")).toBe("4");
    expect(await part.text()).toBe("2345");
    const open = await registry(req("GET", `/v2/r/blobs/${digest}`, { headers: { range: "bytes=18-" } }));
    expect(await open.text()).toBe("ij");
    const suffix = await registry(req("GET", `/v2/r/blobs/${digest}`, { headers: { range: "bytes=-3" } }));
    expect(suffix.status).toBe(206);
    expect(await suffix.text()).toBe("hij");
    const clamped = await registry(req("GET", `/v2/r/blobs/${digest}`, { headers: { range: "bytes=15-100" } }));
    expect(clamped.headers.get("content-range")).toBe("bytes 15-19/20");
  });

  it("answers 416 for an unsatisfiable range", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    const response = await registry(req("GET", `/v2/r/blobs/${digest}`, { headers: { range: "bytes=20-30" } }));
    expect(response.status).toBe(416);
    expect(response.headers.get("content-range")).toBe("bytes */20");
    expect(await errorCode(response)).toBe("RANGE_INVALID");
  });

  it("a blob is visible only in repositories it is linked to", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "one", CONTENT);
    const other = await registry(req("GET", `/v2/two/blobs/${digest}`));
    expect(other.status).toBe(404);
    expect(await errorCode(other)).toBe("BLOB_UNKNOWN");
    expect((await registry(req("HEAD", `/v2/two/blobs/${digest}`))).status).toBe(404);
    expect((await registry(req("GET", `/v2/one/blobs/${sha256("never pushed")}`))).status).toBe(404);
  });
});

describe("blob DELETE", () => {
  it("is 405 UNSUPPORTED when deletion is disabled (the default)", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    const response = await registry(req("DELETE", `/v2/r/blobs/${digest}`));
    expect(response.status).toBe(405);
    expect(await errorCode(response)).toBe("UNSUPPORTED");
    expect(response.headers.get("allow")).toBe("GET, HEAD");
    expect((await registry(req("HEAD", `/v2/r/blobs/${digest}`))).status).toBe(200);
  });

  it("unlinks the blob from the repository when enabled (202)", async () => {
    const registry = makeRegistry({ deleteEnabled: true });
    const digest = await pushBlob(registry, "r", CONTENT);
    await pushBlob(registry, "keep", CONTENT);
    const response = await registry(req("DELETE", `/v2/r/blobs/${digest}`));
    expect(response.status).toBe(202);
    expect((await registry(req("HEAD", `/v2/r/blobs/${digest}`))).status).toBe(404);
    expect((await registry(req("HEAD", `/v2/keep/blobs/${digest}`))).status).toBe(200);
    const again = await registry(req("DELETE", `/v2/r/blobs/${digest}`));
    expect(again.status).toBe(404);
    expect(await errorCode(again)).toBe("BLOB_UNKNOWN");
  });
});

describe("blob GET with Range (RFC 9110 §14)", () => {
  const get = (registry: ReturnType<typeof makeRegistry>, digest: string, range: string) => registry(req("GET", `/v2/r/blobs/${digest}`, { headers: { range } }));

  async function expectUnsatisfiable(response: Response, size: number): Promise<void> {
    expect(response.status).toBe(416);
    expect(response.headers.get("content-range")).toBe(`bytes */${size}`);
    expect(await errorCode(response)).toBe("RANGE_INVALID");
  }

  it.each(["bytes=20-", "bytes=21-", "bytes=99999999999999999999-"])("answers 416 with Content-Range bytes */20 for %j, which starts at or past the end", async (range) => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    await expectUnsatisfiable(await get(registry, digest, range), 20);
  });

  it("answers 416 for a range whose last byte comes before its first (bytes=5-2), rather than ignoring it", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    await expectUnsatisfiable(await get(registry, digest, "bytes=5-2"), 20);
  });

  it("serves the last byte for bytes=19- and the whole blob as 206 for bytes=0-", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    const last = await get(registry, digest, "bytes=19-");
    expect(last.status).toBe(206);
    expect(last.headers.get("content-range")).toBe("bytes 19-19/20");
    expect(await last.text()).toBe("j");
    const all = await get(registry, digest, "bytes=0-");
    expect(all.status).toBe(206);
    expect(all.headers.get("content-range")).toBe("bytes 0-19/20");
    expect(all.headers.get("content-length")).toBe("20");
    expect(await all.text()).toBe(CONTENT);
  });

  it("serves a suffix range longer than the blob as the whole blob (206 bytes 0-19/20), and answers 416 for bytes=-0", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    const longer = await get(registry, digest, "bytes=-50");
    expect(longer.status).toBe(206);
    expect(longer.headers.get("content-range")).toBe("bytes 0-19/20");
    expect(await longer.text()).toBe(CONTENT);
    await expectUnsatisfiable(await get(registry, digest, "bytes=-0"), 20);
  });

  it("accepts the unit in any case and spaces around the range", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    const response = await get(registry, digest, "Bytes= 2-5 ");
    expect(response.status).toBe(206);
    expect(await response.text()).toBe("2345");
  });

  it("on an empty blob: bytes=0- is 416 bytes */0; a suffix range is served as the whole (empty) blob with 200", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", "");
    await expectUnsatisfiable(await get(registry, digest, "bytes=0-"), 0);
    const suffix = await get(registry, digest, "bytes=-5");
    expect(suffix.status).toBe(200);
    expect(suffix.headers.get("content-length")).toBe("0");
    expect(suffix.headers.get("content-range")).toBeNull();
    expect(await suffix.text()).toBe("");
  });

  it.each(["bytes=abc", "bytes=1-2-3", "bytes=-", "bytes=", "bytes", "items=0-1", "bytes=0x1-2", "bytes=1.5-2"])(
    "ignores the malformed or foreign-unit header %j and serves the whole blob with 200",
    async (range) => {
      const registry = makeRegistry();
      const digest = await pushBlob(registry, "r", CONTENT);
      const response = await get(registry, digest, range);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-range")).toBeNull();
      expect(await response.text()).toBe(CONTENT);
    },
  );

  it("serves the whole blob with 200 for several ranges, even when none of them is satisfiable", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    for (const range of ["bytes=0-1,4-5", "bytes=30-40,50-60"]) {
      const response = await get(registry, digest, range);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(CONTENT);
    }
  });

  it("HEAD ignores Range (range handling is defined for GET only): 200 with the full Content-Length", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    for (const range of ["bytes=2-5", "bytes=20-", "bytes=5-2"]) {
      const head = await registry(req("HEAD", `/v2/r/blobs/${digest}`, { headers: { range } }));
      expect(head.status).toBe(200);
      expect(head.headers.get("content-length")).toBe("20");
      expect(head.headers.get("content-range")).toBeNull();
      expect(head.body).toBeNull();
    }
  });
});
