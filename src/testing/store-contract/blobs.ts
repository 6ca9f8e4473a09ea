/**
 * The contract of the blob and upload stores: an upload becomes a blob of
 * its repository only when committed with its digest; reads, ranges,
 * deletes and mounts.
 *
 * @module
 */
import { expect, it } from "vitest";
import { bytesOf, digestOf, readAllBytes, streamOf, type StoreContractContext } from "./context.js";

export function blobTests(ctx: StoreContractContext): void {
  const { call } = ctx;

  it("a committed upload is a blob of its repository only: stat, read whole and read a range", async () => {
    const digest = await ctx.pushBlob("contract/a", "0123456789");
    const blobs = ctx.stores().blobs;
    expect(await blobs.stat("contract/a", digest, call)).toMatchObject({ digest: { value: digest.value }, size: 10 });
    expect(await blobs.stat("contract/other", digest, call)).toBeUndefined();
    const whole = await blobs.read("contract/a", digest, {}, call);
    expect(whole?.kind).toBe("bytes");
    if (whole?.kind !== "bytes") return;
    expect(whole.range).toBeUndefined();
    expect(new TextDecoder().decode(await readAllBytes(whole.body))).toBe("0123456789");
    const part = await blobs.read("contract/a", digest, { range: "bytes=2-4" }, call);
    if (part?.kind !== "bytes") throw new Error("expected bytes");
    expect(part.range).toEqual({ start: 2, end: 4 });
    expect(part.size).toBe(10);
    expect(new TextDecoder().decode(await readAllBytes(part.body))).toBe("234");
    expect(await blobs.read("contract/other", digest, {}, call)).toBeUndefined();
  });

  it("an unsatisfiable range is 416 RANGE_INVALID", async () => {
    const digest = await ctx.pushBlob("contract/a", "abc");
    const error = await ctx.registryError(ctx.stores().blobs.read("contract/a", digest, { range: "bytes=5-" }, call));
    expect([error.code, error.status]).toEqual(["RANGE_INVALID", 416]);
  });

  it("delete unlinks the blob from its repository; deleting an unknown blob is BLOB_UNKNOWN", async () => {
    const digest = await ctx.pushBlob("contract/a", "gone soon");
    await ctx.pushBlob("contract/b", "gone soon");
    await ctx.stores().blobs.delete("contract/a", digest, call);
    expect(await ctx.stores().blobs.stat("contract/a", digest, call)).toBeUndefined();
    expect(await ctx.stores().blobs.stat("contract/b", digest, call)).toBeDefined();
    const error = await ctx.registryError(ctx.stores().blobs.delete("contract/a", digest, call));
    expect([error.code, error.status]).toEqual(["BLOB_UNKNOWN", 404]);
  });

  it("mount links a blob of another repository, and does nothing when that repository lacks it", async () => {
    const digest = await ctx.pushBlob("contract/a", "shared");
    const mounted = await ctx.stores().blobs.mount("contract/b", "contract/a", digest, call);
    expect(mounted).toMatchObject({ size: 6, created: true });
    expect(await ctx.stores().blobs.stat("contract/b", digest, call)).toMatchObject({ size: 6 });
    expect(await ctx.stores().blobs.mount("contract/c", "contract/nothing", digest, call)).toBeUndefined();
    expect(await ctx.stores().blobs.stat("contract/c", digest, call)).toBeUndefined();
  });

  it("uploads: status follows appends, a wrong offset is 416, a chunked upload commits, cancel forgets the session", async () => {
    const uploads = ctx.stores().uploads;
    const session = await uploads.start("contract/a", call);
    expect(typeof session.uuid).toBe("string");
    expect(await uploads.status("contract/a", session, call)).toBe(0);
    const first = await uploads.append("contract/a", session, streamOf(bytesOf("hello ")), { expectedSize: 0, algorithm: "sha256" }, call);
    expect(first).toMatchObject({ size: 6, written: 6 });
    const wrong = await ctx.registryError(uploads.append("contract/a", session, streamOf(bytesOf("x")), { expectedSize: 2, algorithm: "sha256" }, call));
    expect([wrong.code, wrong.status]).toEqual(["RANGE_INVALID", 416]);
    const second = await uploads.append("contract/a", session, streamOf(bytesOf("world")), { expectedSize: 6, algorithm: "sha256" }, call);
    expect(second.size).toBe(11);
    expect(await uploads.status("contract/a", session, call)).toBe(11);
    const digest = digestOf("hello world");
    const blob = await uploads.commit("contract/a", session, digest, { size: 11 }, call);
    expect(blob).toMatchObject({ size: 11, created: true });
    expect(await uploads.status("contract/a", session, call)).toBeUndefined();
    const other = await uploads.start("contract/a", call);
    await uploads.cancel("contract/a", other, call);
    expect(await uploads.status("contract/a", other, call)).toBeUndefined();
  });

  it("a commit whose bytes do not hash to the digest is DIGEST_INVALID and removes the upload; nothing becomes visible", async () => {
    const uploads = ctx.stores().uploads;
    const session = await uploads.start("contract/a", call);
    await uploads.append("contract/a", session, streamOf(bytesOf("real bytes")), { expectedSize: 0, algorithm: "sha256" }, call);
    const claimed = digestOf("other bytes");
    const error = await ctx.registryError(uploads.commit("contract/a", session, claimed, { size: 10 }, call));
    expect([error.code, error.status]).toEqual(["DIGEST_INVALID", 400]);
    expect(await uploads.status("contract/a", session, call)).toBeUndefined();
    expect(await ctx.stores().blobs.stat("contract/a", claimed, call)).toBeUndefined();
  });
}
