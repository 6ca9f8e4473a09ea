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

  it("ignores a multi-range header and serves the whole blob", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "r", CONTENT);
    const response = await registry(req("GET", `/v2/r/blobs/${digest}`, { headers: { range: "bytes=0-1,4-5" } }));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(CONTENT);
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
