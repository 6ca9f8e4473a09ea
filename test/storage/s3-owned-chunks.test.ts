/**
 * The S3 driver copies a streamed body into its part buffers; a body whose
 * chunks are its reader's (util/owned-chunks.ts: an HTTP/1 upload through the
 * Node adapter) has each chunk freed once copied. The parts must still carry
 * the body's bytes, and a body nobody marked keeps its chunks. Against a real
 * radosgw, through `append` and `write`.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checked } from "../../src/storage/driver.js";
import { s3Storage } from "../../src/storage/s3/index.js";
import { markOwnedChunks } from "../../src/runtime/adapter-capabilities.js";
import { bytesReleased } from "../../src/util/owned-chunks.js";
import { freshRoot, readObject, useRadosgw } from "./helpers/rgw.js";

const rgw = useRadosgw();
const KiB = 1024;
const sha = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** `n` chunks of 64 KiB, each its own buffer, with distinct contents. */
function chunks(n: number): Buffer[] {
  return Array.from({ length: n }, (_, i) => Buffer.allocUnsafeSlow(64 * KiB).fill((i * 7) % 251));
}

function streamOf(list: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({ pull: (c) => (i < list.length ? c.enqueue(list[i++]!) : c.close()) }, { highWaterMark: 0 });
}

describe("s3 driver: owned body chunks (radosgw)", () => {
  it("frees a marked body's chunks once copied into its parts, for append and write, and stores the same bytes", async () => {
    const root = freshRoot();
    // Parts of 5 MiB (the S3 minimum): 120 chunks of 64 KiB make one full part and a short one.
    const driver = checked(s3Storage({ ...rgw.options(), rootDirectory: root, partSize: 5 * 1024 * KiB }));
    for (const op of ["append", "write"] as const) {
      const body = chunks(120);
      const expected = sha(Buffer.concat(body));
      const before = bytesReleased();
      if (op === "append") await driver.append("owned/appended", markOwnedChunks(streamOf(body)), { expectedSize: 0 });
      else await driver.write("owned/written", markOwnedChunks(streamOf(body)));
      expect(bytesReleased() - before).toBe(120 * 64 * KiB);
      for (const chunk of body) expect(chunk.byteLength).toBe(0);
      expect(sha(await readObject(driver, op === "append" ? "owned/appended" : "owned/written"))).toBe(expected);
    }
  });

  it("keeps an unmarked body's chunks as they were", async () => {
    const root = freshRoot();
    const driver = checked(s3Storage({ ...rgw.options(), rootDirectory: root }));
    const body = chunks(20);
    const copy = Buffer.concat(body);
    const before = bytesReleased();
    await driver.write("kept/written", streamOf(body));
    expect(bytesReleased()).toBe(before);
    expect(Buffer.concat(body).equals(copy)).toBe(true);
    expect((await readObject(driver, "kept/written")).equals(copy)).toBe(true);
  });
});
