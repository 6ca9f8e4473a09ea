/**
 * The contract of the manifest, tag and repository stores: a stored manifest
 * is served byte for byte, tags point at it, deletes take what they should,
 * lists page in order.
 *
 * @module
 */
import { expect, it } from "vitest";
import type { StoredManifest } from "../../registry/stores/types.js";
import { readAllBytes, type StoreContractContext } from "./context.js";

async function bytesOf(manifest: StoredManifest): Promise<Uint8Array> {
  if (manifest.bytes) return manifest.bytes;
  const body = await manifest.body?.();
  if (!body) throw new Error("a stored manifest with neither bytes nor a body");
  return readAllBytes(body);
}

// Over 80 lines: a list of `it` blocks, each short.
export function manifestTests(ctx: StoreContractContext): void {
  const { call } = ctx;

  it("a put manifest is served byte for byte, by digest and through its tag; `created` only for what made the repository", async () => {
    // Its blobs, committed first, made the repository.
    const image = await ctx.pushImage("contract/a", "one", "v1");
    expect(image.created).toBe(false);
    const again = await ctx.pushImage("contract/a", "two", "v2");
    expect(again.created).toBe(false);
    const stores = ctx.stores();
    const tag = await stores.tags.resolve("contract/a", "v1", call);
    expect(tag?.digest.value).toBe(image.digest.value);
    const manifest = await stores.manifests.get("contract/a", image.digest, call);
    expect(manifest).toMatchObject({ mediaType: "application/vnd.oci.image.manifest.v1+json", size: image.bytes.byteLength });
    expect(await bytesOf(manifest!)).toEqual(image.bytes);
    expect(await stores.manifests.get("contract/other", image.digest, call)).toBeUndefined();
    expect(await stores.tags.resolve("contract/a", "missing", call)).toBeUndefined();
  });

  it("get with `known` answers the same version while the revision is unchanged", async () => {
    const image = await ctx.pushImage("contract/a", "one", "v1");
    const stores = ctx.stores();
    const first = await stores.manifests.get("contract/a", image.digest, call);
    const second = await stores.manifests.get("contract/a", image.digest, call, first);
    expect(second?.version).toBe(first?.version);
    expect(second?.digest.value).toBe(image.digest.value);
    const tag = await stores.tags.resolve("contract/a", "v1", call);
    expect((await stores.tags.resolve("contract/a", "v1", call, tag))?.version).toBe(tag?.version);
  });

  it("delete by digest removes the revision and every tag pointing at it; the last manifest's delete empties the repository", async () => {
    const image = await ctx.pushImage("contract/a", "one", "v1");
    await ctx.stores().tags.set("contract/a", "latest", image.digest, call);
    const result = await ctx.stores().manifests.delete("contract/a", image.digest, call);
    expect([...result.untagged].sort()).toEqual(["latest", "v1"]);
    expect(result.emptied).toBe(true);
    expect(await ctx.stores().manifests.get("contract/a", image.digest, call)).toBeUndefined();
    expect(await ctx.stores().tags.resolve("contract/a", "v1", call)).toBeUndefined();
    const error = await ctx.registryError(ctx.stores().manifests.delete("contract/a", image.digest, call));
    expect([error.code, error.status]).toEqual(["MANIFEST_UNKNOWN", 404]);
  });

  it("a tag delete removes only the tag and answers the digest it pointed at; an unknown tag is MANIFEST_UNKNOWN", async () => {
    const image = await ctx.pushImage("contract/a", "one", "v1");
    expect(await ctx.stores().tags.delete("contract/a", "v1", call)).toBe(image.digest.value);
    expect(await ctx.stores().tags.resolve("contract/a", "v1", call)).toBeUndefined();
    expect(await ctx.stores().manifests.get("contract/a", image.digest, call)).toBeDefined();
    const error = await ctx.registryError(ctx.stores().tags.delete("contract/a", "v1", call));
    expect([error.code, error.status]).toEqual(["MANIFEST_UNKNOWN", 404]);
  });

  it("tags list in lexical order, paged; an unknown repository is NAME_UNKNOWN; details give digests", async () => {
    const image = await ctx.pushImage("contract/a", "one", "b");
    for (const tag of ["c", "a", "d"]) await ctx.stores().tags.set("contract/a", tag, image.digest, call);
    const tags = ctx.stores().tags;
    expect(await tags.list("contract/a", { n: 10 }, call)).toEqual({ tags: ["a", "b", "c", "d"], truncated: false });
    expect(await tags.list("contract/a", { n: 2 }, call)).toEqual({ tags: ["a", "b"], truncated: true });
    expect(await tags.list("contract/a", { n: 2, last: "b" }, call)).toEqual({ tags: ["c", "d"], truncated: false });
    const error = await ctx.registryError(tags.list("contract/none", { n: 10 }, call));
    expect([error.code, error.status]).toEqual(["NAME_UNKNOWN", 404]);
    const details = await tags.details("contract/a", { limit: 10 }, call);
    expect(details.tags.map((t) => [t.tag, t.digest])).toEqual(["a", "b", "c", "d"].map((t) => [t, image.digest.value]));
  });

  it("referrers list the manifests whose subject is the digest, filtered by artifact type", async () => {
    const subject = await ctx.pushImage("contract/a", "subject", "v1");
    const descriptor = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: subject.digest.value, size: subject.bytes.byteLength };
    const signature = await ctx.pushImage("contract/a", "signature", undefined, { subject: descriptor, artifactType: "application/example.signature" });
    await ctx.pushImage("contract/a", "sbom", undefined, { subject: descriptor, artifactType: "application/example.sbom" });
    const referrers = ctx.stores().manifests.referrers;
    expect((await referrers("contract/a", subject.digest, { limit: 10 }, call)).length).toBe(2);
    const filtered = await referrers("contract/a", subject.digest, { artifactType: "application/example.signature", limit: 10 }, call);
    expect(filtered.map((r) => r.digest)).toEqual([signature.digest.value]);
    expect(await referrers("contract/a", signature.digest, { limit: 10 }, call)).toEqual([]);
  });

  it("the catalog lists repositories in order, paged; a deleted repository leaves it; writes to a plain repository are allowed", async () => {
    for (const name of ["contract/c", "contract/a", "contract/b"]) await ctx.pushImage(name, name, "v1");
    const repositories = ctx.stores().repositories;
    await repositories.writable("contract/a", call);
    expect(await repositories.catalog({ n: 10 }, call)).toEqual({ repositories: ["contract/a", "contract/b", "contract/c"], truncated: false });
    expect(await repositories.catalog({ n: 2, last: "contract/a" }, call)).toEqual({ repositories: ["contract/b", "contract/c"], truncated: false });
    const report = await repositories.delete("contract/b", {}, call);
    expect(report).toMatchObject({ repository: "contract/b", found: true, tags: 1, manifests: 1 });
    expect((await repositories.catalog({ n: 10 }, call)).repositories).toEqual(["contract/a", "contract/c"]);
  });

  it("forgetIfEmpty takes a repository holding blobs only out of the catalog, and keeps one with a manifest", async () => {
    await ctx.pushBlob("contract/blobs-only", "a blob");
    await ctx.pushImage("contract/image", "image", "v1");
    const repositories = ctx.stores().repositories;
    expect(await repositories.forgetIfEmpty("contract/blobs-only", call)).toBe(true);
    expect(await repositories.forgetIfEmpty("contract/image", call)).toBe(false);
    expect((await repositories.catalog({ n: 10 }, call)).repositories).toEqual(["contract/image"]);
  });
}
