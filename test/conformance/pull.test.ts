/**
 * Conformance, pull workflow: blobs and manifests by digest and tag, the 404s
 * of what does not exist, byte ranges, error bodies, and the clean-up deletes,
 * in every mode (auth on/off × deletes on/off).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { configBlob, content, digestOf, errorCodes, expectBody, expectDelete, imageManifest, MEDIA, MODES, pushBlob, pushManifest, randomContent, SPEC_ERROR_CODES, target, type Content, type Target, itIf } from "./setup.js";

const REPO = "conformance/pull";
const TAG = "tagtest0";
// Not a valid tag (it starts with a dot): the spec's answer to GET or HEAD of it is 404.
const INVALID_REFERENCE = ".INVALID_MANIFEST_NAME";
const ABSENT = digestOf("hello world");

describe.each(MODES)("pull (auth $auth, deletes $deletes)", (mode) => {
  let t: Target;
  const configs = [configBlob("pull-0"), configBlob("pull-1")];
  const layer = randomContent(1024);
  const manifests = configs.map((c) => imageManifest(c, [layer]));

  beforeAll(async () => {
    t = target(mode);
    for (const blob of [...configs, layer]) await pushBlob(t, REPO, blob);
    await pushManifest(t, REPO, TAG, manifests[0]!);
    await pushManifest(t, REPO, manifests[1]!.digest, manifests[1]!);
  });

  it("GET /v2/ answers 200", async () => {
    expect((await t.send("GET", "/v2/")).status).toBe(200);
  });

  itIf(mode.auth)("without a token, GET /v2/ and a blob GET get 401 UNAUTHORIZED with a Bearer challenge naming realm, service and scope", async () => {
    const ping = await t.anonymous("GET", "/v2/");
    expect(ping.status).toBe(401);
    expect(ping.headers.get("www-authenticate")).toBe('Bearer realm="http://auth.test/token",service="registry.test"');
    const blob = await t.anonymous("GET", `/v2/${REPO}/blobs/${layer.digest}`);
    expect(blob.status).toBe(401);
    expect(blob.headers.get("www-authenticate")).toBe(`Bearer realm="http://auth.test/token",service="registry.test",scope="repository:${REPO}:pull"`);
    expect(await errorCodes(blob)).toEqual(["UNAUTHORIZED"]);
  });

  describe("blobs", () => {
    it("HEAD of a blob that does not exist is 404 with no body", async () => {
      const head = await t.send("HEAD", `/v2/${REPO}/blobs/${ABSENT}`);
      expect(head.status).toBe(404);
      expect(head.body).toBeNull();
    });

    it("HEAD of an existing blob is 200 with its Docker-Content-Digest and Content-Length, and no body", async () => {
      const head = await t.send("HEAD", `/v2/${REPO}/blobs/${configs[0]!.digest}`);
      expect(head.status).toBe(200);
      expect(head.headers.get("docker-content-digest")).toBe(configs[0]!.digest);
      expect(head.headers.get("content-length")).toBe(String(configs[0]!.size));
      expect(head.body).toBeNull();
    });

    it("GET of a blob that does not exist is 404 BLOB_UNKNOWN", async () => {
      const get = await t.send("GET", `/v2/${REPO}/blobs/${ABSENT}`);
      expect(get.status).toBe(404);
      expect(await errorCodes(get)).toEqual(["BLOB_UNKNOWN"]);
    });

    it("GET of an existing blob is 200 with its exact bytes, Content-Length and Docker-Content-Digest", async () => {
      for (const blob of [configs[0]!, layer]) {
        const get = await t.send("GET", `/v2/${REPO}/blobs/${blob.digest}`);
        expect(get.status).toBe(200);
        expect(get.headers.get("content-length")).toBe(String(blob.size));
        expect(get.headers.get("docker-content-digest")).toBe(blob.digest);
        await expectBody(get, blob);
      }
    });
  });

  describe("blob ranges (2048-byte blob)", () => {
    const blob = randomContent(2048);
    beforeAll(() => pushBlob(t, REPO, blob));
    const get = (range: string) => t.send("GET", `/v2/${REPO}/blobs/${blob.digest}`, { headers: { range } });

    it.each([
      ["bytes=500-1499", 500, 1499],
      ["bytes=500-", 500, 2047],
      ["bytes=-500", 1548, 2047],
      ["bytes=2000-5000", 2000, 2047],
    ])("%s is 206 with exactly those bytes, their Content-Length and Content-Range", async (range, first, last) => {
      const response = await get(range);
      expect(response.status).toBe(206);
      expect(response.headers.get("content-length")).toBe(String(last - first + 1));
      expect(response.headers.get("content-range")).toBe(`bytes ${first}-${last}/2048`);
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(blob.bytes.subarray(first, last + 1));
    });

    it.each(["bytes=500-0", "bytes=5000-10000", "bytes=2048-"])("%s is 416 with Content-Range bytes */2048", async (range) => {
      const response = await get(range);
      expect(response.status).toBe(416);
      expect(response.headers.get("content-range")).toBe("bytes */2048");
    });
  });

  describe("manifests", () => {
    it("HEAD of a reference that is not a valid tag is 404", async () => {
      expect((await t.send("HEAD", `/v2/${REPO}/manifests/${INVALID_REFERENCE}`)).status).toBe(404);
    });

    it("GET of a reference that is not a valid tag is 404 MANIFEST_UNKNOWN", async () => {
      const get = await t.send("GET", `/v2/${REPO}/manifests/${INVALID_REFERENCE}`);
      expect(get.status).toBe(404);
      expect(await errorCodes(get)).toEqual(["MANIFEST_UNKNOWN"]);
    });

    it("GET of a tag and of a digest that were never pushed is 404 MANIFEST_UNKNOWN", async () => {
      for (const reference of ["missing-tag", digestOf(crypto.getRandomValues(new Uint8Array(1024)))]) {
        const get = await t.send("GET", `/v2/${REPO}/manifests/${reference}`, { headers: { accept: `${MEDIA.manifest}, ${MEDIA.index}` } });
        expect(get.status).toBe(404);
        expect(await errorCodes(get)).toEqual(["MANIFEST_UNKNOWN"]);
      }
    });

    const byReference = (): [string, string, Content][] => [
      ["digest of manifest 0", manifests[0]!.digest, manifests[0]!],
      ["digest of manifest 1 (pushed by digest)", manifests[1]!.digest, manifests[1]!],
      ["tag", TAG, manifests[0]!],
    ];

    it.each(byReference())("HEAD by %s is 200 with Docker-Content-Digest, Content-Type, Content-Length and no body", async (_what, reference, manifest) => {
      const head = await t.send("HEAD", `/v2/${REPO}/manifests/${reference}`, { headers: { accept: MEDIA.manifest } });
      expect(head.status).toBe(200);
      expect(head.headers.get("docker-content-digest")).toBe(manifest.digest);
      expect(head.headers.get("content-type")).toBe(MEDIA.manifest);
      expect(head.headers.get("content-length")).toBe(String(manifest.size));
      expect(head.body).toBeNull();
    });

    it.each(byReference())("GET by %s is 200 with the pushed bytes, Content-Type and Docker-Content-Digest", async (_what, reference, manifest) => {
      const get = await t.send("GET", `/v2/${REPO}/manifests/${reference}`, { headers: { accept: MEDIA.manifest } });
      expect(get.status).toBe(200);
      expect(get.headers.get("docker-content-digest")).toBe(manifest.digest);
      expect(get.headers.get("content-type")).toBe(MEDIA.manifest);
      expect(get.headers.get("content-length")).toBe(String(manifest.size));
      await expectBody(get, manifest);
    });
  });

  it("a malformed digest reference is 400 with an OCI error body whose code is one the spec defines", async () => {
    const get = await t.send("GET", `/v2/${REPO}/manifests/sha256:totallywrong`);
    expect(get.status).toBe(400);
    const codes = await errorCodes(get);
    expect(codes).toEqual(["DIGEST_INVALID"]);
    expect(SPEC_ERROR_CODES).toContain(codes[0]);
  });

  it("teardown: deleting the manifests, then the blobs, is 202 and leaves 404s (deletes on) or 405 UNSUPPORTED and the content served (deletes off)", async () => {
    const repo = `${REPO}-teardown`;
    const config = configBlob("pull-teardown");
    const manifest = imageManifest(config, [layer]);
    for (const blob of [config, layer]) await pushBlob(t, repo, blob);
    await pushManifest(t, repo, TAG, manifest);

    await expectDelete(t, `/v2/${repo}/manifests/${manifest.digest}`);
    for (const blob of [config, layer]) await expectDelete(t, `/v2/${repo}/blobs/${blob.digest}`);

    const expected = mode.deletes ? 404 : 200;
    expect((await t.send("GET", `/v2/${repo}/manifests/${manifest.digest}`)).status).toBe(expected);
    expect((await t.send("GET", `/v2/${repo}/manifests/${TAG}`)).status).toBe(expected);
    for (const blob of [config, layer]) expect((await t.send("GET", `/v2/${repo}/blobs/${blob.digest}`)).status).toBe(expected);
  });
});

// The empty-content cases of the newest suite: a zero-byte blob and the OCI empty JSON blob `{}`.
describe.each(MODES)("pull of well-known contents (auth $auth, deletes $deletes)", (mode) => {
  it.each([
    ["empty", content("")],
    ["empty JSON", content("{}")],
  ])("the %s blob is pushed, then HEAD and GET give its Content-Length and bytes", async (_name, blob) => {
    const t = target(mode);
    await pushBlob(t, REPO, blob);
    const head = await t.send("HEAD", `/v2/${REPO}/blobs/${blob.digest}`);
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(blob.size));
    const get = await t.send("GET", `/v2/${REPO}/blobs/${blob.digest}`);
    expect(get.status).toBe(200);
    expect(get.headers.get("docker-content-digest")).toBe(blob.digest);
    await expectBody(get, blob);
  });
});
