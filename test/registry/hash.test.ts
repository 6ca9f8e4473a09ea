import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createHasher, digestStream, hashBackend } from "../../src/oci/hash.js";

describe("streaming hasher", () => {
  it("uses node:crypto on Node", () => {
    expect(hashBackend()).toBe("node:crypto");
  });

  it.each(["sha256", "sha512"] as const)("node:crypto and noble agree with the reference for %s over odd chunking", (algorithm) => {
    const data = new Uint8Array(100_003).map((_, i) => (i * 31 + 7) & 255);
    const expected = `${algorithm}:${createHash(algorithm).update(data).digest("hex")}`;
    for (const backend of ["node:crypto", "noble"] as const) {
      const hasher = createHasher(algorithm, backend);
      for (let offset = 0; offset < data.length; offset += 4099) hasher.update(data.subarray(offset, offset + 4099));
      expect(hasher.digest()).toBe(expected);
    }
    const empty = createHasher(algorithm, "noble");
    expect(empty.digest()).toBe(`${algorithm}:${createHash(algorithm).digest("hex")}`);
  });

  it("digests a stream", async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode("hello "));
        c.enqueue(new TextEncoder().encode("world"));
        c.close();
      },
    });
    expect(await digestStream("sha256", stream)).toBe(`sha256:${createHash("sha256").update("hello world").digest("hex")}`);
  });
});
