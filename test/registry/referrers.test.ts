import { describe, expect, it } from "vitest";
import { MEDIA_TYPES } from "../../src/registry/index.js";
import { bytes, makeRegistry, pushBlob, pushImage, req, sha256, type Handler } from "./helpers.js";

const EMPTY = "{}";

async function pushArtifact(registry: Handler, name: string, subject: { digest: string; size: number }, options: { artifactType?: string; configType?: string; annotations?: Record<string, string>; tag?: string }) {
  const config = await pushBlob(registry, name, EMPTY);
  const doc: Record<string, unknown> = {
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.ociManifest,
    config: { mediaType: options.configType ?? MEDIA_TYPES.ociEmpty, digest: config, size: 2 },
    layers: [],
    subject: { mediaType: MEDIA_TYPES.ociManifest, digest: subject.digest, size: subject.size },
  };
  if (options.artifactType) doc.artifactType = options.artifactType;
  if (options.annotations) doc.annotations = options.annotations;
  const manifest = JSON.stringify(doc);
  const response = await registry(req("PUT", `/v2/${name}/manifests/${options.tag ?? sha256(manifest)}`, { body: bytes(manifest), headers: { "content-type": MEDIA_TYPES.ociManifest } }));
  return { response, manifest, digest: sha256(manifest) };
}

interface Index {
  schemaVersion: number;
  mediaType: string;
  manifests: { mediaType: string; digest: string; size: number; artifactType?: string; annotations?: Record<string, string> }[];
}

describe("referrers", () => {
  it("indexes manifests with a subject and answers OCI-Subject on PUT", async () => {
    const registry = makeRegistry();
    const image = await pushImage(registry, "app", "v1");
    const subject = { digest: image.digest, size: bytes(image.manifest).byteLength };
    const sbom = await pushArtifact(registry, "app", subject, { artifactType: "application/spdx+json", annotations: { "org.example.kind": "sbom" } });
    expect(sbom.response.status).toBe(201);
    expect(sbom.response.headers.get("oci-subject")).toBe(image.digest);
    const sig = await pushArtifact(registry, "app", subject, { configType: "application/vnd.example.signature.config+json", tag: "sig" });
    expect(sig.response.status).toBe(201);

    const response = await registry(req("GET", `/v2/app/referrers/${image.digest}`));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(MEDIA_TYPES.ociIndex);
    expect(response.headers.get("oci-filters-applied")).toBeNull();
    const index = (await response.json()) as Index;
    expect(index.schemaVersion).toBe(2);
    expect(index.mediaType).toBe(MEDIA_TYPES.ociIndex);
    const byDigest = new Map(index.manifests.map((m) => [m.digest, m]));
    expect(byDigest.size).toBe(2);
    expect(byDigest.get(sbom.digest)).toEqual({
      mediaType: MEDIA_TYPES.ociManifest,
      digest: sbom.digest,
      size: bytes(sbom.manifest).byteLength,
      artifactType: "application/spdx+json",
      annotations: { "org.example.kind": "sbom" },
    });
    // without artifactType, the config media type stands in
    expect(byDigest.get(sig.digest)?.artifactType).toBe("application/vnd.example.signature.config+json");
  });

  it("filters by ?artifactType= and says so in OCI-Filters-Applied", async () => {
    const registry = makeRegistry();
    const image = await pushImage(registry, "app", "v1");
    const subject = { digest: image.digest, size: bytes(image.manifest).byteLength };
    const sbom = await pushArtifact(registry, "app", subject, { artifactType: "application/spdx+json" });
    await pushArtifact(registry, "app", subject, { artifactType: "application/vnd.example.sig" });
    const response = await registry(req("GET", `/v2/app/referrers/${image.digest}?artifactType=${encodeURIComponent("application/spdx+json")}`));
    expect(response.headers.get("oci-filters-applied")).toBe("artifactType");
    const index = (await response.json()) as Index;
    expect(index.manifests.map((m) => m.digest)).toEqual([sbom.digest]);
  });

  it("answers an empty index for a subject with no referrers (even unknown)", async () => {
    const registry = makeRegistry();
    const response = await registry(req("GET", `/v2/app/referrers/${sha256("nothing")}`));
    expect(response.status).toBe(200);
    expect(((await response.json()) as Index).manifests).toEqual([]);
  });

  it("accepts a referrer before its subject exists, and drops it when deleted", async () => {
    const registry = makeRegistry({ deleteEnabled: true });
    const subject = { digest: sha256("future subject"), size: 10 };
    const art = await pushArtifact(registry, "app", subject, { artifactType: "application/x" });
    expect(art.response.status).toBe(201);
    expect(((await (await registry(req("GET", `/v2/app/referrers/${subject.digest}`))).json()) as Index).manifests).toHaveLength(1);
    expect((await registry(req("DELETE", `/v2/app/manifests/${art.digest}`))).status).toBe(202);
    expect(((await (await registry(req("GET", `/v2/app/referrers/${subject.digest}`))).json()) as Index).manifests).toEqual([]);
  });

  it("keeps referrers per repository", async () => {
    const registry = makeRegistry();
    const image = await pushImage(registry, "app", "v1");
    await pushArtifact(registry, "app", { digest: image.digest, size: 1 }, { artifactType: "application/x" });
    const other = await registry(req("GET", `/v2/other/referrers/${image.digest}`));
    expect(((await other.json()) as Index).manifests).toEqual([]);
  });
});
