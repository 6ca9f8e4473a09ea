/**
 * Conformance, push workflow: blob uploads (streamed, monolithic, single POST,
 * chunked in order and out of order, with the last chunk in the PUT, bad
 * digests, cancel), cross-repository mounts, sha512, and manifest uploads of
 * every kind the suites push, in every mode (auth on/off × deletes on/off).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { configBlob, content, descriptor, digestOf, errorCodes, expectBody, expectDelete, imageManifest, MEDIA, MODES, ORIGIN, pushBlob, pushManifest, randomContent, target, withDigest, type Content, type Send, type Target, itIf } from "./setup.js";

const REPO = "conformance/push";
const OCTETS = "application/octet-stream";

/** POST a new upload session; returns its Location. */
async function startUpload(t: Target, repo: string = REPO): Promise<string> {
  const post = await t.send("POST", `/v2/${repo}/blobs/uploads/`, { headers: { "content-length": "0" } });
  expect(post.status).toBe(202);
  const location = post.headers.get("location");
  expect(location).toBeTruthy();
  return location!;
}

/** Bytes `start`…`end` of `blob` as one chunk, with the headers the suites send. */
function chunk(blob: Content, start: number, end: number): Send {
  return {
    body: blob.bytes.slice(start, end + 1),
    headers: { "content-type": OCTETS, "content-length": String(end - start + 1), "content-range": `${start}-${end}` },
  };
}

/** Expect a 201 whose Location serves `blob`, with its digest header. */
async function expectBlobCreated(t: Target, response: Response, repo: string, blob: Content): Promise<void> {
  expect(response.status, await response.clone().text()).toBe(201);
  expect(response.headers.get("location")).toBe(`${ORIGIN}/v2/${repo}/blobs/${blob.digest}`);
  expect(response.headers.get("docker-content-digest")).toBe(blob.digest);
  const get = await t.send("GET", response.headers.get("location")!);
  expect(get.status).toBe(200);
  await expectBody(get, blob);
}

async function expectNoBlob(t: Target, repo: string, digest: string): Promise<void> {
  expect((await t.send("HEAD", `/v2/${repo}/blobs/${digest}`)).status).toBe(404);
}

interface ChunkedOptions {
  chunkSize?: number;
  /** Before each chunk, send one that does not start at the offset (expect 416), then recover with GET. */
  outOfOrder?: boolean;
  /** Send the last chunk in the closing PUT instead of a PATCH. */
  putLastChunk?: boolean;
  /** The digest named in the PUT (default the blob's). */
  digest?: string;
}

/** A chunked push as the newest conformance suite makes it; returns the closing PUT's response. */
async function chunkedPush(t: Target, repo: string, blob: Content, options: ChunkedOptions = {}): Promise<Response> {
  const { chunkSize = 1024, outOfOrder = false, putLastChunk = false, digest = blob.digest } = options;
  let location = await startUpload(t, repo);
  const send = (start: number, end: number) => {
    const last = putLastChunk && end === blob.size - 1;
    return t.send(last ? "PUT" : "PATCH", last ? withDigest(location, digest) : location, chunk(blob, start, end));
  };
  let next = 0;
  while (next < blob.size) {
    if (outOfOrder) {
      // Skip a chunk ahead, or go back to the start when there is nothing ahead.
      const badStart = next + chunkSize < blob.size ? next + chunkSize : 0;
      const badEnd = Math.min(badStart + chunkSize, blob.size) - 1;
      const bad = await send(badStart, badEnd);
      expect(bad.status, `chunk at ${badStart} while the offset is ${next}`).toBe(416);
      // The suite asks the status at the URL the refused chunk went to (a PUT's has digest= added).
      const status = await t.send("GET", putLastChunk && badEnd === blob.size - 1 ? withDigest(location, digest) : location);
      expect(status.status).toBe(204);
      expect(status.headers.get("range")).toBe(`0-${Math.max(0, next - 1)}`);
      location = status.headers.get("location")!;
    }
    const end = Math.min(next + chunkSize, blob.size) - 1;
    const response = await send(next, end);
    if (putLastChunk && end === blob.size - 1) return response;
    expect(response.status).toBe(202);
    expect(response.headers.get("range")).toBe(`0-${end}`);
    location = response.headers.get("location")!;
    next = end + 1;
  }
  return t.send("PUT", withDigest(location, digest), { headers: { "content-type": OCTETS, "content-length": "0" } });
}

describe.each(MODES)("push (auth $auth, deletes $deletes)", (mode) => {
  let t: Target;
  beforeAll(() => {
    t = target(mode);
  });

  describe("blob upload, streamed", () => {
    it("POST is 202 with a Location, the upload id and Range 0-0", async () => {
      const post = await t.send("POST", `/v2/${REPO}/blobs/uploads/`);
      expect(post.status).toBe(202);
      expect(post.headers.get("location")).toMatch(new RegExp(`^${ORIGIN}/v2/${REPO}/blobs/uploads/[0-9a-f-]{36}\\?`));
      expect(post.headers.get("docker-upload-uuid")).toMatch(/^[0-9a-f-]{36}$/);
      expect(post.headers.get("range")).toBe("0-0");
    });

    it("PATCH with the blob and no Content-Range is 202 with Range 0-<last>; PUT ?digest= is 201 and the Location serves the blob", async () => {
      const blob = randomContent(42);
      const location = await startUpload(t);
      const patch = await t.send("PATCH", location, { body: blob.bytes, headers: { "content-type": OCTETS } });
      expect(patch.status).toBe(202);
      expect(patch.headers.get("range")).toBe("0-41");
      expect(patch.headers.get("location")).toBeTruthy();
      const put = await t.send("PUT", withDigest(patch.headers.get("location")!, blob.digest), { headers: { "content-type": OCTETS, "content-length": "0" } });
      await expectBlobCreated(t, put, REPO, blob);
    });

    it("with a wrong digest the PUT is 400 DIGEST_INVALID and no blob appears", async () => {
      const blob = randomContent(3067);
      const location = await startUpload(t);
      const patch = await t.send("PATCH", location, { body: blob.bytes, headers: { "content-type": OCTETS } });
      const put = await t.send("PUT", withDigest(patch.headers.get("location")!, digestOf("other bytes")));
      expect(put.status).toBe(400);
      expect(await errorCodes(put)).toEqual(["DIGEST_INVALID"]);
      await expectNoBlob(t, REPO, blob.digest);
    });
  });

  describe("blob upload, monolithic", () => {
    it("GET of a blob not pushed yet is 404", async () => {
      expect((await t.send("GET", `/v2/${REPO}/blobs/${digestOf("not pushed yet")}`)).status).toBe(404);
    });

    it("POST ?digest= with the blob is 201 (single request) and the Location serves it", async () => {
      const blob = configBlob("push-single-post");
      const post = await t.send("POST", `/v2/${REPO}/blobs/uploads/?digest=${blob.digest}`, {
        body: blob.bytes,
        headers: { "content-type": OCTETS, "content-length": String(blob.size) },
      });
      await expectBlobCreated(t, post, REPO, blob);
    });

    it("POST, then PUT ?digest= with the blob is 201 and the Location serves it", async () => {
      for (const blob of [configBlob("push-post-put"), randomContent(2000)]) {
        const location = await startUpload(t);
        const put = await t.send("PUT", withDigest(location, blob.digest), { body: blob.bytes, headers: { "content-type": OCTETS, "content-length": String(blob.size) } });
        await expectBlobCreated(t, put, REPO, blob);
      }
    });

    it("a wrong digest is 400 DIGEST_INVALID, for the single POST and for POST+PUT, and no blob appears", async () => {
      const blob = randomContent(100);
      const wrong = digestOf("something else");
      const post = await t.send("POST", `/v2/${REPO}/blobs/uploads/?digest=${wrong}`, { body: blob.bytes, headers: { "content-type": OCTETS } });
      expect(post.status).toBe(400);
      expect(await errorCodes(post)).toEqual(["DIGEST_INVALID"]);
      const put = await t.send("PUT", withDigest(await startUpload(t), wrong), { body: blob.bytes, headers: { "content-type": OCTETS } });
      expect(put.status).toBe(400);
      expect(await errorCodes(put)).toEqual(["DIGEST_INVALID"]);
      await expectNoBlob(t, REPO, wrong);
      await expectNoBlob(t, REPO, blob.digest);
    });
  });

  describe("blob upload, chunked", () => {
    // The distribution-spec v1.1.1 suite's sequence: a 42-byte blob in chunks of 22 and 20 bytes.
    it("out-of-order chunk 416, first chunk 202, retried first chunk 416, status of the stale session 204, second chunk 202, PUT 201", async () => {
      const blob = randomContent(42);
      const first = chunk(blob, 0, 21);
      const second = chunk(blob, 22, 41);

      const outOfOrder = await t.send("PATCH", await startUpload(t), second);
      expect(outOfOrder.status).toBe(416);

      const start = await startUpload(t);
      const patched = await t.send("PATCH", start, first);
      expect(patched.status).toBe(202);
      expect(patched.headers.get("range")).toBe("0-21");

      expect((await t.send("PATCH", start, first)).status).toBe(416);

      const status = await t.send("GET", start);
      expect(status.status).toBe(204);
      expect(status.headers.get("range")).toBe("0-21");
      expect(status.headers.get("location")).toBeTruthy();

      const rest = await t.send("PATCH", status.headers.get("location")!, second);
      expect(rest.status).toBe(202);
      expect(rest.headers.get("location")).toBeTruthy();
      const put = await t.send("PUT", withDigest(rest.headers.get("location")!, blob.digest), { headers: { "content-type": OCTETS, "content-length": "0" } });
      await expectBlobCreated(t, put, REPO, blob);
    });

    // The newest suite: a blob of three chunks (3 × 1024 - 5 bytes).
    it.each([
      ["in order", {}],
      ["in order, the last chunk in the PUT", { putLastChunk: true }],
      ["each preceded by an out-of-order chunk (416) and a status GET", { outOfOrder: true }],
      ["each preceded by an out-of-order chunk, the last one a PUT (416, session kept), the last chunk in the PUT", { outOfOrder: true, putLastChunk: true }],
    ] as [string, ChunkedOptions][])("three chunks %s: 201 and the Location serves the blob", async (_how, options) => {
      const blob = randomContent(3 * 1024 - 5);
      await expectBlobCreated(t, await chunkedPush(t, REPO, blob, options), REPO, blob);
    });

    it.each([
      ["closed by an empty PUT", {}],
      ["with the last chunk in the PUT", { putLastChunk: true }],
    ] as [string, ChunkedOptions][])("with a wrong digest, %s: 400 DIGEST_INVALID and no blob", async (_how, options) => {
      const blob = randomContent(3 * 1024 - 5);
      const wrong = digestOf("not these bytes");
      const put = await chunkedPush(t, REPO, blob, { ...options, digest: wrong });
      expect(put.status).toBe(400);
      expect(await errorCodes(put)).toEqual(["DIGEST_INVALID"]);
      await expectNoBlob(t, REPO, blob.digest);
      await expectNoBlob(t, REPO, wrong);
    });

    it("a closing PUT whose Content-Range does not start at the offset is 416 with the current Range, and the session goes on", async () => {
      const blob = randomContent(300);
      const patch = await t.send("PATCH", await startUpload(t), chunk(blob, 0, 99));
      const location = patch.headers.get("location")!;
      for (const [start, end] of [[150, 299], [0, 299], [99, 299]] as const) {
        const put = await t.send("PUT", withDigest(location, blob.digest), chunk(blob, start, end));
        expect(put.status, `Content-Range ${start}-${end}`).toBe(416);
        expect(put.headers.get("range")).toBe("0-99");
        expect(await errorCodes(put)).toEqual(["RANGE_INVALID"]);
      }
      const status = await t.send("GET", location);
      expect(status.status).toBe(204);
      expect(status.headers.get("range")).toBe("0-99");
      await expectBlobCreated(t, await t.send("PUT", withDigest(status.headers.get("location")!, blob.digest), chunk(blob, 100, 299)), REPO, blob);
    });

    it("a Content-Range whose end comes before its start (500-0) is refused with 416, on PATCH and on PUT, and changes nothing", async () => {
      const blob = randomContent(1000);
      const patch = await t.send("PATCH", await startUpload(t), chunk(blob, 0, 499));
      const location = patch.headers.get("location")!;
      const bad: Send = { body: blob.bytes.slice(500), headers: { "content-type": OCTETS, "content-range": "500-0" } };
      for (const [method, url] of [["PATCH", location], ["PUT", withDigest(location, blob.digest)]] as const) {
        const response = await t.send(method, url, bad);
        expect(response.status, method).toBe(416);
        expect(response.headers.get("range")).toBe("0-499");
      }
      const status = await t.send("GET", location);
      expect(status.status).toBe(204);
      expect(status.headers.get("range")).toBe("0-499");
      await expectNoBlob(t, REPO, blob.digest);
    });

    it("the empty blob is pushed by single POST, POST+PUT, an empty PATCH then PUT, and POST then PUT without any chunk", async () => {
      const empty = content("");
      const repos = ["single", "post-put", "patch", "no-chunk"].map((how) => `${REPO}-empty-${how}`);
      const [single, postPut, patch, noChunk] = repos as [string, string, string, string];
      await expectBlobCreated(t, await t.send("POST", `/v2/${single}/blobs/uploads/?digest=${empty.digest}`, { body: empty.bytes, headers: { "content-length": "0" } }), single, empty);
      await expectBlobCreated(t, await t.send("PUT", withDigest(await startUpload(t, postPut), empty.digest), { body: empty.bytes }), postPut, empty);
      const patched = await t.send("PATCH", await startUpload(t, patch), { body: empty.bytes, headers: { "content-type": OCTETS } });
      expect(patched.status).toBe(202);
      await expectBlobCreated(t, await t.send("PUT", withDigest(patched.headers.get("location")!, empty.digest)), patch, empty);
      await expectBlobCreated(t, await chunkedPush(t, noChunk, empty), noChunk, empty);
    });

    it("DELETE of the session is 204 (cancel); its status is then 404 BLOB_UPLOAD_UNKNOWN", async () => {
      const location = await startUpload(t);
      expect((await t.send("DELETE", location, { headers: { "content-length": "0" } })).status).toBe(204);
      const status = await t.send("GET", location);
      expect(status.status).toBe(404);
      expect(await errorCodes(status)).toEqual(["BLOB_UPLOAD_UNKNOWN"]);
    });
  });

  describe("sha512", () => {
    it("a blob pushed by its sha512 digest (single POST, POST+PUT, chunked) is served by it with that digest header", async () => {
      const repo = `${REPO}-sha512`;
      const single = randomContent(512, "sha512");
      await expectBlobCreated(t, await t.send("POST", `/v2/${repo}/blobs/uploads/?digest=${single.digest}`, { body: single.bytes, headers: { "content-type": OCTETS } }), repo, single);
      const postPut = randomContent(512, "sha512");
      await expectBlobCreated(t, await t.send("PUT", withDigest(await startUpload(t, repo), postPut.digest), { body: postPut.bytes }), repo, postPut);
      const chunked = randomContent(3 * 1024 - 5, "sha512");
      await expectBlobCreated(t, await chunkedPush(t, repo, chunked), repo, chunked);
      const head = await t.send("HEAD", `/v2/${repo}/blobs/${chunked.digest}`);
      expect(head.headers.get("docker-content-digest")).toBe(chunked.digest);
      expect(head.headers.get("content-length")).toBe(String(chunked.size));
    });

    it("a manifest of sha512 blobs, and an index of it, pushed by their sha512 digests are 201 and served by those digests", async () => {
      const repo = `${REPO}-sha512`;
      const config = content(configBlob("sha512").bytes, "sha512");
      const layer = randomContent(300, "sha512");
      for (const blob of [config, layer]) await pushBlob(t, repo, blob);
      const manifest = content(imageManifest(config, [layer]).bytes, "sha512");
      const index = content(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.index, manifests: [descriptor(MEDIA.manifest, manifest)] }), "sha512");
      for (const [m, mediaType] of [[manifest, MEDIA.manifest], [index, MEDIA.index]] as const) {
        const put = await pushManifest(t, repo, m.digest, m, mediaType);
        expect(put.headers.get("docker-content-digest")).toBe(m.digest);
        const get = await t.send("GET", `/v2/${repo}/manifests/${m.digest}`);
        expect(get.status).toBe(200);
        await expectBody(get, m);
      }
    });
  });

  describe("cross-repository mount", () => {
    const source = `${REPO}-mount-source`;
    const into = `${REPO}-mount-target`;
    const blob = randomContent(512);
    beforeAll(() => pushBlob(t, source, blob));

    it("?mount= without from, of a digest nobody has, is 202 with a session Location", async () => {
      const post = await t.send("POST", `/v2/${into}/blobs/uploads/?mount=${digestOf("hello world")}`);
      expect(post.status).toBe(202);
      expect(post.headers.get("location")).toMatch(new RegExp(`^${ORIGIN}/v2/${into}/blobs/uploads/`));
    });

    it("?mount=&from= of a blob the source has is 201; the Location (/v2/<target>/blobs/<digest>) serves it", async () => {
      const post = await t.send("POST", `/v2/${into}/blobs/uploads/?mount=${blob.digest}&from=${source}`);
      await expectBlobCreated(t, post, into, blob);
    });

    it("?mount= without from, of a blob the registry has, is 202: no automatic content discovery, and the session takes the upload", async () => {
      // Linking without `from` would hand out blobs of repositories the caller was never granted pull on.
      const repo = `${REPO}-mount-anonymous`;
      const post = await t.send("POST", `/v2/${repo}/blobs/uploads/?mount=${blob.digest}`);
      expect(post.status).toBe(202);
      await expectNoBlob(t, repo, blob.digest);
      await expectBlobCreated(t, await t.send("PUT", withDigest(post.headers.get("location")!, blob.digest), { body: blob.bytes }), repo, blob);
    });

    it("?mount=&from= of a blob the source does not have is 202 with a session under the target, which takes the upload", async () => {
      const repo = `${REPO}-mount-missing`;
      const missing = randomContent(512);
      const post = await t.send("POST", `/v2/${repo}/blobs/uploads/?mount=${missing.digest}&from=${source}`);
      expect(post.status).toBe(202);
      expect(post.headers.get("location")).toMatch(new RegExp(`^${ORIGIN}/v2/${repo}/blobs/uploads/`));
      await expectNoBlob(t, repo, missing.digest);
      await expectBlobCreated(t, await t.send("PUT", withDigest(post.headers.get("location")!, missing.digest), { body: missing.bytes }), repo, missing);
    });

    itIf(mode.auth)("without a token, the mount is challenged for push on the target and pull on the source", async () => {
      const post = await t.anonymous("POST", `/v2/${into}/blobs/uploads/?mount=${blob.digest}&from=${source}`);
      expect(post.status).toBe(401);
      expect(post.headers.get("www-authenticate")).toContain(`scope="repository:${into}:pull,push repository:${source}:pull"`);
    });
  });

  describe("manifest upload", () => {
    const repo = `${REPO}-manifests`;
    const config = configBlob("push-1");
    const layer = randomContent(1024);
    const manifest = imageManifest(config, [layer]);
    beforeAll(async () => {
      for (const blob of [config, layer]) await pushBlob(t, repo, blob);
    });

    /** PUT, then GET the Location: the same bytes, media type and length. */
    async function expectManifestCreated(reference: string, m: Content, mediaType: string = MEDIA.manifest): Promise<Response> {
      const put = await pushManifest(t, repo, reference, m, mediaType);
      expect(put.headers.get("location")).toBe(`${ORIGIN}/v2/${repo}/manifests/${m.digest}`);
      expect(put.headers.get("docker-content-digest")).toBe(m.digest);
      const get = await t.send("GET", put.headers.get("location")!, { headers: { accept: `${MEDIA.manifest}, ${MEDIA.index}` } });
      expect(get.status).toBe(200);
      expect(get.headers.get("content-type")).toBe(mediaType);
      expect(get.headers.get("content-length")).toBe(String(m.size));
      await expectBody(get, m);
      return put;
    }

    it("GET of a reference that is not a valid tag is 404", async () => {
      expect((await t.send("GET", `/v2/${repo}/manifests/.INVALID_MANIFEST_NAME`)).status).toBe(404);
    });

    it("PUT under four tags is 201 each, with a Location that serves the manifest; each tag then serves it", async () => {
      for (const tag of ["test0", "test1", "test2", "test3"]) await expectManifestCreated(tag, manifest);
      for (const tag of ["test0", "test3"]) expect((await t.send("GET", `/v2/${repo}/manifests/${tag}`)).headers.get("docker-content-digest")).toBe(manifest.digest);
    });

    it("PUT by digest is 201 and GET by the digest serves it", async () => {
      await expectManifestCreated(manifest.digest, manifest);
    });

    it("a manifest with no layers (and no mediaType field: the Content-Type says it) is 201", async () => {
      const noLayers = content(JSON.stringify({ schemaVersion: 2, config: descriptor(MEDIA.config, config), layers: [] }, null, "\t"));
      await expectManifestCreated("emptylayer", noLayers);
    });

    it("unknown fields, and descriptors with a data field, are accepted and served byte for byte", async () => {
      const custom = content(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: MEDIA.manifest,
          config: descriptor(MEDIA.config, config, { data: Buffer.from(config.bytes).toString("base64"), newUnspecifiedField: "aGVsbG8gd29ybGQ=" }),
          layers: [descriptor(MEDIA.layer, layer)],
          "org.example.unknown": { nested: [1, 2, 3] },
        }),
      );
      await expectManifestCreated("custom-fields", custom);
    });

    it("layers with urls (non-distributable) need not be pushed", async () => {
      const foreign = randomContent(256);
      const m = content(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: MEDIA.manifest,
          config: descriptor(MEDIA.config, config),
          layers: [
            descriptor("application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", foreign, { size: 123456, urls: [`https://store.example.com/blobs/sha256/${foreign.digest.slice(7)}`] }),
            descriptor(MEDIA.layer, layer),
          ],
        }),
      );
      await expectManifestCreated("non-distributable-image", m);
    });

    it("an index of two manifests, an index of indexes and an empty index are 201 and served with the index media type", async () => {
      const architectures = ["amd64", "arm64"];
      const configs = architectures.map((architecture) => configBlob(`push-${architecture}`));
      for (const c of configs) await pushBlob(t, repo, c);
      const platforms = configs.map((c) => imageManifest(c, [layer]));
      for (const m of platforms) await pushManifest(t, repo, m.digest, m);
      const index = content(
        JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.index, manifests: platforms.map((m, i) => descriptor(MEDIA.manifest, m, { platform: { os: "linux", architecture: architectures[i] } })) }),
      );
      await expectManifestCreated("index", index, MEDIA.index);
      const nested = content(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.index, manifests: [descriptor(MEDIA.index, index)] }));
      await expectManifestCreated("index-of-index", nested, MEDIA.index);
      const empty = content(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.index, manifests: [] }));
      await expectManifestCreated("empty-index", empty, MEDIA.index);
    });

    it("an artifact (artifactType, empty config, one layer) is 201", async () => {
      const emptyJson = content("{}");
      const payload = randomContent(64);
      for (const blob of [emptyJson, payload]) await pushBlob(t, repo, blob);
      const artifact = content(
        JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.manifest, artifactType: "application/vnd.example.config.v1+json", config: descriptor(MEDIA.empty, emptyJson), layers: [descriptor("application/vnd.example.config.v1+json", payload)] }),
      );
      await expectManifestCreated("artifact", artifact);
    });

    it("a manifest of almost 4 MiB (390 annotations of 10 000 characters) is 201 and served byte for byte", async () => {
      const annotations = Object.fromEntries(Array.from({ length: 390 }, (_, i) => [`large-annotation-${i}`, "A".repeat(10_000)]));
      const large = imageManifest(config, [layer], { annotations });
      expect(large.size).toBeGreaterThan(3_900_000);
      await expectManifestCreated("large-manifest", large);
    });

    it("a manifest with a subject is 201 with OCI-Subject naming the subject, whether or not the subject exists", async () => {
      const emptyJson = content("{}");
      await pushBlob(t, repo, emptyJson);
      for (const subject of [manifest, imageManifest(configBlob("never pushed"), [])]) {
        const referrer = content(
          JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.manifest, artifactType: "application/vnd.example.sbom", config: descriptor(MEDIA.empty, emptyJson), layers: [descriptor(MEDIA.empty, emptyJson)], subject: descriptor(MEDIA.manifest, subject) }),
        );
        const put = await expectManifestCreated(referrer.digest, referrer);
        expect(put.headers.get("oci-subject")).toBe(subject.digest);
      }
    });

    it("PUT by digest whose bytes do not match (whitespace added) is 400 DIGEST_INVALID, and nothing is stored", async () => {
      const tampered = content(new Uint8Array([...manifest.bytes, 0x20, 0x20]));
      const put = await t.send("PUT", `/v2/${repo}/manifests/${manifest.digest}`, { body: tampered.bytes, headers: { "content-type": MEDIA.manifest } });
      expect(put.status).toBe(400);
      expect(await errorCodes(put)).toEqual(["DIGEST_INVALID"]);
      expect((await t.send("GET", `/v2/${repo}/manifests/${tampered.digest}`)).status).toBe(404);
    });

    it("PUT and GET of the malformed digest sha256:baddigeststring are 400 DIGEST_INVALID", async () => {
      const put = await t.send("PUT", `/v2/${repo}/manifests/sha256:baddigeststring`, { body: manifest.bytes, headers: { "content-type": MEDIA.manifest } });
      expect(put.status).toBe(400);
      expect(await errorCodes(put)).toEqual(["DIGEST_INVALID"]);
      const get = await t.send("GET", `/v2/${repo}/manifests/sha256:baddigeststring`);
      expect(get.status).toBe(400);
      expect(await errorCodes(get)).toEqual(["DIGEST_INVALID"]);
    });

    it("a manifest naming a blob that was never pushed is 400 MANIFEST_BLOB_UNKNOWN; a body that is not a manifest is 400 MANIFEST_INVALID", async () => {
      const missing = await t.send("PUT", `/v2/${repo}/manifests/missing-layer`, { body: imageManifest(config, [randomContent(10)]).bytes, headers: { "content-type": MEDIA.manifest } });
      expect(missing.status).toBe(400);
      expect(await errorCodes(missing)).toEqual(["MANIFEST_BLOB_UNKNOWN"]);
      const junk = await t.send("PUT", `/v2/${repo}/manifests/junk`, { body: "blablabla", headers: { "content-type": MEDIA.manifest } });
      expect(junk.status).toBe(400);
      expect(await errorCodes(junk)).toEqual(["MANIFEST_INVALID"]);
    });

    it("teardown: DELETE of the manifest and its blobs is 202 then 404 (deletes on), or 405 and still served (deletes off)", async () => {
      const own = `${REPO}-teardown`;
      const c = configBlob("push-teardown");
      const m = imageManifest(c, [layer]);
      for (const blob of [c, layer]) await pushBlob(t, own, blob);
      await pushManifest(t, own, "test0", m);
      await expectDelete(t, `/v2/${own}/manifests/${m.digest}`);
      for (const blob of [c, layer]) await expectDelete(t, `/v2/${own}/blobs/${blob.digest}`);
      const expected = mode.deletes ? 404 : 200;
      expect((await t.send("HEAD", `/v2/${own}/manifests/${m.digest}`)).status).toBe(expected);
      for (const blob of [c, layer]) expect((await t.send("HEAD", `/v2/${own}/blobs/${blob.digest}`)).status).toBe(expected);
    });
  });
});
