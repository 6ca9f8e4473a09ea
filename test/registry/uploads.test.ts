import { describe, expect, it, vi } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { bytes, errorCode, makeRegistry, pushBlob, req, sha256, sha512, type Handler } from "./helpers.js";

async function start(registry: Handler, name = "repo/app"): Promise<URL> {
  const response = await registry(req("POST", `/v2/${name}/blobs/uploads/`));
  expect(response.status).toBe(202);
  return new URL(response.headers.get("location")!);
}

function withDigest(location: URL | string, digest: string): string {
  const url = new URL(location);
  url.searchParams.set("digest", digest);
  return url.href;
}

async function blobStatus(registry: Handler, name: string, digest: string): Promise<number> {
  return (await registry(req("HEAD", `/v2/${name}/blobs/${digest}`))).status;
}

function streamOf(chunks: Uint8Array[], failAfter?: number): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (failAfter !== undefined && i === failAfter) {
        controller.error(new Error("connection reset"));
        return;
      }
      const chunk = chunks[i++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
}

describe("chunked uploads", () => {
  it("POST + PATCH (no Content-Range) + empty PUT, like skopeo, without re-reading the upload", async () => {
    const storage = memoryStorage();
    const reads: string[] = [];
    const spying: StorageDriver = { ...storage, read: (key, range) => (reads.push(key), storage.read(key, range)) };
    const registry = createRegistry({ storage: spying, uploadSecret: "s" });
    const content = bytes("the whole layer in one PATCH");
    const digest = sha256(content);
    const location = await start(registry);
    const patch = await registry(req("PATCH", location.href, { body: content }));
    expect(patch.status).toBe(202);
    expect(patch.headers.get("range")).toBe(`0-${content.byteLength - 1}`);
    expect(patch.headers.get("docker-upload-uuid")).toBeTruthy();
    const put = await registry(req("PUT", withDigest(patch.headers.get("location")!, digest)));
    expect(put.status).toBe(201);
    expect(reads.filter((k) => k.includes("_uploads"))).toEqual([]);
    const get = await registry(req("GET", `/v2/repo/app/blobs/${digest}`));
    expect(await get.text()).toBe("the whole layer in one PATCH");
  });

  it("multi-chunk with Content-Range, then PUT with a final chunk (re-hashed at commit)", async () => {
    const registry = makeRegistry();
    const parts = ["aaaa", "bbbbbb", "cc"].map(bytes);
    const digest = sha256("aaaabbbbbbcc");
    let location = (await start(registry)).href;
    let offset = 0;
    for (const part of parts.slice(0, 2)) {
      const patch = await registry(req("PATCH", location, { body: part, headers: { "content-range": `${offset}-${offset + part.byteLength - 1}`, "content-length": String(part.byteLength) } }));
      expect(patch.status).toBe(202);
      offset += part.byteLength;
      expect(patch.headers.get("range")).toBe(`0-${offset - 1}`);
      location = patch.headers.get("location")!;
    }
    const put = await registry(req("PUT", withDigest(location, digest), { body: parts[2] }));
    expect(put.status).toBe(201);
    expect(await (await registry(req("GET", `/v2/repo/app/blobs/${digest}`))).text()).toBe("aaaabbbbbbcc");
  });

  it("rejects an out-of-order chunk with 416 RANGE_INVALID and keeps the upload", async () => {
    const registry = makeRegistry();
    const location = await start(registry);
    const first = await registry(req("PATCH", location.href, { body: bytes("abcd"), headers: { "content-range": "0-3" } }));
    expect(first.status).toBe(202);
    const next = first.headers.get("location")!;
    const skip = await registry(req("PATCH", next, { body: bytes("zz"), headers: { "content-range": "10-11" } }));
    expect(skip.status).toBe(416);
    expect(await errorCode(skip)).toBe("RANGE_INVALID");
    expect(skip.headers.get("range")).toBe("0-3");
    // replaying the old _state (offset 0) conflicts with the stored size
    const replay = await registry(req("PATCH", location.href, { body: bytes("abcd"), headers: { "content-range": "0-3" } }));
    expect(replay.status).toBe(416);
    const put = await registry(req("PUT", withDigest(next, sha256("abcd"))));
    expect(put.status).toBe(201);
  });

  it("rejects a Content-Range that disagrees with Content-Length", async () => {
    const registry = makeRegistry();
    const location = await start(registry);
    const response = await registry(req("PATCH", location.href, { body: bytes("abcd"), headers: { "content-range": "0-9", "content-length": "4" } }));
    expect(response.status).toBe(416);
  });

  it("a digest mismatch answers 400 DIGEST_INVALID and stores nothing", async () => {
    const registry = makeRegistry();
    const location = await start(registry);
    const wrong = sha256("something else");
    const put = await registry(req("PUT", withDigest(location, wrong), { body: bytes("actual bytes") }));
    expect(put.status).toBe(400);
    expect(await errorCode(put)).toBe("DIGEST_INVALID");
    expect(await blobStatus(registry, "repo/app", wrong)).toBe(404);
    expect(await blobStatus(registry, "repo/app", sha256("actual bytes"))).toBe(404);
    // the failed commit cancelled the upload
    const again = await registry(req("GET", location.href));
    expect(again.status).toBe(404);
    expect(await errorCode(again)).toBe("BLOB_UPLOAD_UNKNOWN");
  });

  it("a digest mismatch after PATCH (fast path) also stores nothing", async () => {
    const registry = makeRegistry();
    const location = await start(registry);
    const patch = await registry(req("PATCH", location.href, { body: bytes("patched") }));
    const put = await registry(req("PUT", withDigest(patch.headers.get("location")!, sha256("other"))));
    expect(put.status).toBe(400);
    expect(await blobStatus(registry, "repo/app", sha256("patched"))).toBe(404);
  });

  it("PUT without ?digest is DIGEST_INVALID; a malformed digest too", async () => {
    const registry = makeRegistry();
    const location = await start(registry);
    const none = await registry(req("PUT", location.href, { body: bytes("x") }));
    expect(none.status).toBe(400);
    expect(await errorCode(none)).toBe("DIGEST_INVALID");
    const bad = await registry(req("PUT", withDigest(location, "sha256:XYZ")));
    expect(await errorCode(bad)).toBe("DIGEST_INVALID");
  });

  it("accepts sha512 digests", async () => {
    const registry = makeRegistry();
    const location = await start(registry);
    const patch = await registry(req("PATCH", location.href, { body: bytes("five-twelve") }));
    const digest = sha512("five-twelve");
    const put = await registry(req("PUT", withDigest(patch.headers.get("location")!, digest)));
    expect(put.status).toBe(201);
    expect(await blobStatus(registry, "repo/app", digest)).toBe(200);
  });

  it("single-POST upload with ?digest= and a body answers 201", async () => {
    const registry = makeRegistry();
    const digest = sha256("one shot");
    const response = await registry(req("POST", `/v2/repo/app/blobs/uploads/?digest=${digest}`, { body: bytes("one shot") }));
    expect(response.status).toBe(201);
    expect(response.headers.get("location")).toBe(`http://reg.test/v2/repo/app/blobs/${digest}`);
    expect(await blobStatus(registry, "repo/app", digest)).toBe(200);
    const wrong = await registry(req("POST", `/v2/repo/app/blobs/uploads/?digest=${sha256("nope")}`, { body: bytes("one shot!") }));
    expect(wrong.status).toBe(400);
    expect(await blobStatus(registry, "repo/app", sha256("one shot!"))).toBe(404);
  });

  it("GET status answers 204 with Range and a fresh Location; DELETE cancels (204)", async () => {
    const registry = makeRegistry();
    const location = await start(registry);
    const patch = await registry(req("PATCH", location.href, { body: bytes("12345") }));
    const status = await registry(req("GET", patch.headers.get("location")!));
    expect(status.status).toBe(204);
    expect(status.headers.get("range")).toBe("0-4");
    expect(status.headers.get("location")).toContain("_state=");
    expect(status.headers.get("docker-upload-uuid")).toBe(patch.headers.get("docker-upload-uuid"));
    const cancel = await registry(req("DELETE", status.headers.get("location")!));
    expect(cancel.status).toBe(204);
    const after = await registry(req("PATCH", status.headers.get("location")!, { body: bytes("6") }));
    expect(after.status).toBe(404);
    expect(await errorCode(after)).toBe("BLOB_UPLOAD_UNKNOWN");
  });

  it("an unknown upload id is 404 BLOB_UPLOAD_UNKNOWN", async () => {
    const registry = makeRegistry();
    const response = await registry(req("GET", "/v2/repo/app/blobs/uploads/not-a-uuid"));
    expect(response.status).toBe(404);
    expect(await errorCode(response)).toBe("BLOB_UPLOAD_UNKNOWN");
  });

  it("an upload older than uploadMaxAgeSeconds is unknown", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
      const registry = makeRegistry({ limits: { uploadMaxAgeSeconds: 60 } });
      const location = await start(registry);
      vi.setSystemTime(new Date("2026-01-01T00:00:30Z"));
      expect((await registry(req("GET", location.href))).status).toBe(204);
      vi.setSystemTime(new Date("2026-01-01T00:02:00Z"));
      const late = await registry(req("PATCH", location.href, { body: bytes("x") }));
      expect(late.status).toBe(404);
      expect(await errorCode(late)).toBe("BLOB_UPLOAD_UNKNOWN");
    } finally {
      vi.useRealTimers();
    }
  });

  it("another process with the same secret continues the upload", async () => {
    const storage = memoryStorage();
    const one = createRegistry({ storage, uploadSecret: "shared" });
    const two = createRegistry({ storage, uploadSecret: "shared" });
    const three = createRegistry({ storage, uploadSecret: "different" });
    const location = await start(one);
    const patch = await two(req("PATCH", location.href, { body: bytes("abc"), headers: { "content-range": "0-2" } }));
    expect(patch.status).toBe(202);
    const foreign = await three(req("PUT", withDigest(patch.headers.get("location")!, sha256("abc"))));
    expect(foreign.status).toBe(400);
    expect(await errorCode(foreign)).toBe("BLOB_UPLOAD_INVALID");
    const put = await one(req("PUT", withDigest(patch.headers.get("location")!, sha256("abc"))));
    expect(put.status).toBe(201);
  });

  it("a body that fails mid-upload leaves no visible blob", async () => {
    const registry = makeRegistry();
    const chunks = [bytes("aaaa"), bytes("bbbb"), bytes("cccc")];
    const location = await start(registry);
    const digest = sha256("aaaabbbbcccc");
    const put = await registry(req("PUT", withDigest(location, digest), { body: streamOf(chunks, 2) }));
    expect(put.status).toBe(400);
    expect(await errorCode(put)).toBe("BLOB_UPLOAD_INVALID");
    expect(await blobStatus(registry, "repo/app", digest)).toBe(404);
    const patch = await registry(req("PATCH", location.href, { body: streamOf(chunks, 1) }));
    expect(patch.status).toBe(400);
    expect(await blobStatus(registry, "repo/app", digest)).toBe(404);
  });

  it("an aborted request is 400 BLOB_UPLOAD_INVALID and leaves no visible blob", async () => {
    const registry = makeRegistry();
    const location = await start(registry);
    const controller = new AbortController();
    const chunks = [bytes("aaaa"), bytes("bbbb")];
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (i === 1) controller.abort();
        const chunk = chunks[i++];
        if (chunk) c.enqueue(chunk);
        else c.close();
      },
    });
    const digest = sha256("aaaabbbb");
    const put = await registry(req("PUT", withDigest(location, digest), { body, signal: controller.signal }));
    expect(put.status).toBe(400);
    expect(await errorCode(put)).toBe("BLOB_UPLOAD_INVALID");
    expect(await blobStatus(registry, "repo/app", digest)).toBe(404);
  });
});

describe("_state", () => {
  async function session(registry: Handler) {
    const location = await start(registry);
    const state = location.searchParams.get("_state")!;
    return { location, state };
  }

  function withState(location: URL, state: string | null): string {
    const url = new URL(location);
    if (state === null) url.searchParams.delete("_state");
    else url.searchParams.set("_state", state);
    return url.href;
  }

  it("is required", async () => {
    const registry = makeRegistry();
    const { location } = await session(registry);
    const response = await registry(req("PATCH", withState(location, null), { body: bytes("x") }));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("BLOB_UPLOAD_INVALID");
  });

  it("rejects a forged signature", async () => {
    const registry = makeRegistry();
    const { location, state } = await session(registry);
    const [payload] = state.split(".");
    const response = await registry(req("PATCH", withState(location, `${payload}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`), { body: bytes("x") }));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("BLOB_UPLOAD_INVALID");
  });

  it("rejects an altered payload (offset changed, signature kept)", async () => {
    const registry = makeRegistry();
    const { location, state } = await session(registry);
    const [payload, mac] = state.split(".");
    const fields = JSON.parse(Buffer.from(payload!, "base64url").toString()) as unknown[];
    fields[2] = 1000;
    const altered = `${Buffer.from(JSON.stringify(fields)).toString("base64url")}.${mac}`;
    const response = await registry(req("PATCH", withState(location, altered), { body: bytes("x") }));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("BLOB_UPLOAD_INVALID");
  });

  it("rejects garbage", async () => {
    const registry = makeRegistry();
    const { location } = await session(registry);
    for (const junk of ["", "abc", "a.b.c", "!!!.???", "x".repeat(5000)]) {
      const response = await registry(req("GET", withState(location, junk)));
      expect(response.status).toBe(400);
    }
  });

  it("rejects a state minted for another repository or another upload", async () => {
    const registry = makeRegistry();
    const a = await session(registry);
    const other = await start(registry, "other/repo");
    const otherState = other.searchParams.get("_state")!;
    const crossRepo = await registry(req("PATCH", withState(a.location, otherState), { body: bytes("x") }));
    expect(crossRepo.status).toBe(400);
    expect(await errorCode(crossRepo)).toBe("BLOB_UPLOAD_INVALID");
    const b = await session(registry);
    const crossUpload = await registry(req("PATCH", withState(a.location, b.state), { body: bytes("x") }));
    expect(crossUpload.status).toBe(400);
    // the same state on the other repository's path, with this upload's id, fails too
    const moved = new URL(a.location.href.replace("/repo/app/", "/other/repo/"));
    expect((await registry(req("GET", moved.href))).status).toBe(400);
  });
});

describe("cross-repository mount", () => {
  it("answers 201 and links the blob when `from` has it", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "source/repo", "shared layer");
    expect(await blobStatus(registry, "target/repo", digest)).toBe(404);
    const response = await registry(req("POST", `/v2/target/repo/blobs/uploads/?mount=${digest}&from=source/repo`));
    expect(response.status).toBe(201);
    expect(response.headers.get("location")).toBe(`http://reg.test/v2/target/repo/blobs/${digest}`);
    expect(response.headers.get("docker-content-digest")).toBe(digest);
    expect(await blobStatus(registry, "target/repo", digest)).toBe(200);
  });

  it("falls back to a 202 upload session when `from` lacks the blob", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "source/repo", "shared layer");
    const response = await registry(req("POST", `/v2/target/repo/blobs/uploads/?mount=${digest}&from=elsewhere`));
    expect(response.status).toBe(202);
    expect(response.headers.get("location")).toContain("/v2/target/repo/blobs/uploads/");
    expect(await blobStatus(registry, "target/repo", digest)).toBe(404);
  });

  it("treats ?mount without from as a normal upload (Distribution 2.8)", async () => {
    const registry = makeRegistry();
    const digest = await pushBlob(registry, "source/repo", "shared layer");
    const response = await registry(req("POST", `/v2/target/repo/blobs/uploads/?mount=${digest}`));
    expect(response.status).toBe(202);
  });

  it("validates mount and from", async () => {
    const registry = makeRegistry();
    const badDigest = await registry(req("POST", "/v2/t/blobs/uploads/?mount=sha256:nothex&from=a"));
    expect(await errorCode(badDigest)).toBe("DIGEST_INVALID");
    const badFrom = await registry(req("POST", `/v2/t/blobs/uploads/?mount=${sha256("x")}&from=../etc`));
    expect(await errorCode(badFrom)).toBe("NAME_INVALID");
  });
});
