/**
 * Conformance, content management workflow: deleting tags, manifests and
 * blobs, and what pulls and listings answer afterwards, in every mode. With
 * deletes off every DELETE is 405 UNSUPPORTED (after authorization) and
 * nothing changes.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { configBlob, digestOf, errorCodes, expectDelete, imageManifest, MODES, pushBlob, pushManifest, randomContent, target, type Content, type Target, itIf, describeIf } from "./setup.js";

const TAG = "tagtest0";

interface Image {
  repo: string;
  config: Content;
  layer: Content;
  manifest: Content;
}

let counter = 0;

/** A config, a layer and a manifest tagged `tagtest0` in a repository of its own. */
async function pushImage(t: Target): Promise<Image> {
  const repo = `conformance/management-${++counter}`;
  const config = configBlob(repo);
  const layer = randomContent(1024);
  for (const blob of [config, layer]) await pushBlob(t, repo, blob);
  const manifest = imageManifest(config, [layer]);
  await pushManifest(t, repo, TAG, manifest);
  return { repo, config, layer, manifest };
}

async function tags(t: Target, repo: string): Promise<string[]> {
  const response = await t.send("GET", `/v2/${repo}/tags/list`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { tags: string[] }).tags;
}

const status = async (t: Target, method: string, path: string) => (await t.send(method, path)).status;

describe.each(MODES)("content management (auth $auth, deletes $deletes)", (mode) => {
  let t: Target;
  let image: Image;
  beforeEach(async () => {
    t = target(mode);
    image = await pushImage(t);
  });

  describeIf(mode.deletes)("with deletes on", () => {
    it("DELETE of a tag is 202; the tag is then 404 on HEAD and GET and gone from tags/list, while the manifest stays by digest", async () => {
      await pushManifest(t, image.repo, "other", image.manifest);
      expect(await status(t, "DELETE", `/v2/${image.repo}/manifests/${TAG}`)).toBe(202);
      expect(await status(t, "HEAD", `/v2/${image.repo}/manifests/${TAG}`)).toBe(404);
      const get = await t.send("GET", `/v2/${image.repo}/manifests/${TAG}`);
      expect(get.status).toBe(404);
      expect(await errorCodes(get)).toEqual(["MANIFEST_UNKNOWN"]);
      expect(await tags(t, image.repo)).toEqual(["other"]);
      expect(await status(t, "GET", `/v2/${image.repo}/manifests/${image.manifest.digest}`)).toBe(200);
    });

    it("DELETE of a manifest by digest is 202 with its digest header; it is then 404, and so is every tag that pointed at it", async () => {
      await pushManifest(t, image.repo, "other", image.manifest);
      const del = await t.send("DELETE", `/v2/${image.repo}/manifests/${image.manifest.digest}`);
      expect(del.status).toBe(202);
      expect(del.headers.get("docker-content-digest")).toBe(image.manifest.digest);
      for (const reference of [image.manifest.digest, TAG, "other"]) {
        expect(await status(t, "GET", `/v2/${image.repo}/manifests/${reference}`), reference).toBe(404);
        expect(await status(t, "HEAD", `/v2/${image.repo}/manifests/${reference}`), reference).toBe(404);
      }
      expect(await tags(t, image.repo)).toEqual([]);
    });

    it("the suite's order: DELETE tag 202, DELETE digest 202, GET digest 404, tags/list one tag fewer", async () => {
      const before = await tags(t, image.repo);
      expect(await status(t, "DELETE", `/v2/${image.repo}/manifests/${TAG}`)).toBe(202);
      expect(await status(t, "DELETE", `/v2/${image.repo}/manifests/${image.manifest.digest}`)).toBe(202);
      expect(await status(t, "GET", `/v2/${image.repo}/manifests/${image.manifest.digest}`)).toBe(404);
      expect(await tags(t, image.repo)).toHaveLength(before.length - 1);
    });

    it("DELETE of the blobs is 202; they are then 404 on GET and HEAD (BLOB_UNKNOWN)", async () => {
      for (const blob of [image.config, image.layer]) {
        const del = await t.send("DELETE", `/v2/${image.repo}/blobs/${blob.digest}`);
        expect(del.status).toBe(202);
        expect(del.headers.get("docker-content-digest")).toBe(blob.digest);
        const get = await t.send("GET", `/v2/${image.repo}/blobs/${blob.digest}`);
        expect(get.status).toBe(404);
        expect(await errorCodes(get)).toEqual(["BLOB_UNKNOWN"]);
        expect(await status(t, "HEAD", `/v2/${image.repo}/blobs/${blob.digest}`)).toBe(404);
      }
    });

    it("a blob deleted from one repository stays in another that mounted it", async () => {
      const other = `${image.repo}-mounted`;
      expect(await status(t, "POST", `/v2/${other}/blobs/uploads/?mount=${image.layer.digest}&from=${image.repo}`)).toBe(201);
      expect(await status(t, "DELETE", `/v2/${image.repo}/blobs/${image.layer.digest}`)).toBe(202);
      expect(await status(t, "GET", `/v2/${image.repo}/blobs/${image.layer.digest}`)).toBe(404);
      expect(await status(t, "GET", `/v2/${other}/blobs/${image.layer.digest}`)).toBe(200);
    });

    it("DELETE of what is already gone, or never was, is 404 with MANIFEST_UNKNOWN or BLOB_UNKNOWN", async () => {
      expect(await status(t, "DELETE", `/v2/${image.repo}/manifests/${image.manifest.digest}`)).toBe(202);
      const cases: [string, string][] = [
        [`/v2/${image.repo}/manifests/${image.manifest.digest}`, "MANIFEST_UNKNOWN"],
        [`/v2/${image.repo}/manifests/${TAG}`, "MANIFEST_UNKNOWN"],
        [`/v2/${image.repo}/manifests/never-tagged`, "MANIFEST_UNKNOWN"],
        [`/v2/${image.repo}/manifests/.INVALID_MANIFEST_NAME`, "MANIFEST_UNKNOWN"],
        [`/v2/${image.repo}/blobs/${digestOf("never pushed")}`, "BLOB_UNKNOWN"],
      ];
      for (const [path, code] of cases) {
        const response = await t.send("DELETE", path);
        expect(response.status, path).toBe(404);
        expect(await errorCodes(response)).toEqual([code]);
      }
    });
  });

  describeIf(!mode.deletes)("with deletes off", () => {
    it("DELETE of a tag, a manifest and its blobs is 405 UNSUPPORTED without DELETE in Allow, and everything is still served", async () => {
      const paths = [
        `/v2/${image.repo}/manifests/${TAG}`,
        `/v2/${image.repo}/manifests/${image.manifest.digest}`,
        `/v2/${image.repo}/blobs/${image.config.digest}`,
        `/v2/${image.repo}/blobs/${image.layer.digest}`,
      ];
      for (const path of paths) await expectDelete(t, path);
      for (const path of paths) expect(await status(t, "GET", path), path).toBe(200);
      expect(await tags(t, image.repo)).toEqual([TAG]);
    });

    it("DELETE of what does not exist is 405 as well: deletion is off whatever the target", async () => {
      for (const path of [`/v2/${image.repo}/manifests/never-tagged`, `/v2/${image.repo}/blobs/${digestOf("never pushed")}`, `/v2/${image.repo}/manifests/.INVALID_MANIFEST_NAME`]) {
        expect(await status(t, "DELETE", path), path).toBe(405);
      }
    });
  });

  itIf(mode.auth)("without a token, DELETE is challenged for the delete action (before deletion being off is revealed)", async () => {
    for (const path of [`/v2/${image.repo}/manifests/${image.manifest.digest}`, `/v2/${image.repo}/blobs/${image.layer.digest}`]) {
      const response = await t.anonymous("DELETE", path);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain(`scope="repository:${image.repo}:delete"`);
    }
  });
});
