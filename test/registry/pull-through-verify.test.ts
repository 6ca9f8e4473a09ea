/**
 * Issue 41, item 1, in process (and so on every runtime of the matrix): the
 * client's copy of a blob pulled through the cache holds back its last chunk
 * until the digest and size are checked. A body that ends within two chunks is
 * judged before the answer (a mismatch is a 502); a longer one that does not
 * match errors with its last chunk never given out, so whatever the adapter
 * (Node, Bun, Deno, Workers), the client cannot receive a complete wrong body.
 * test/adapters/pull-through-verify.test.ts checks the same over sockets with
 * curl and fetch; test/interop/runtimes-pull-through.test.ts on each runtime.
 */
import { describe, expect, it } from "vitest";
import { createRegistry, type Upstream } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { blobData } from "../../src/registry/stores/base/layout.js";
import { parseDigest } from "../../src/oci/digest.js";
import { errorCode, req, sha256 } from "./helpers.js";

const CHUNK = 1000;

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
  return out;
}

/** An upstream whose one blob body is `sent`, in chunks of CHUNK bytes, announcing `size`. */
function evilUpstream(sent: Uint8Array, size: number | undefined): Upstream {
  return {
    headManifest: async () => undefined,
    getManifest: async () => undefined,
    headBlob: async () => (size === undefined ? {} : { size }),
    getBlob: async () => {
      let at = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (at >= sent.byteLength) return controller.close();
          controller.enqueue(sent.slice(at, at + CHUNK));
          at += CHUNK;
        },
      });
      return { body, ...(size === undefined ? {} : { size }) };
    },
  };
}

async function pullThrough(sent: Uint8Array, size: number | undefined, digest: string) {
  const storage = memoryStorage();
  const registry = createRegistry({ storage, uploadSecret: "s", log: () => {}, pullThrough: { upstreams: [{ prefix: "", upstream: evilUpstream(sent, size) }] } });
  const response = await registry(req("GET", `/v2/x/y/blobs/${digest}`));
  return { storage, response };
}

/** Read a body to its end or its error: the bytes that came, and the error. */
async function drain(body: ReadableStream<Uint8Array>): Promise<{ received: number; error?: unknown }> {
  const reader = body.getReader();
  let received = 0;
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) received += r.value.byteLength;
    return { received };
  } catch (error) {
    return { received, error };
  }
}

async function nothingStored(storage: ReturnType<typeof memoryStorage>, digest: string): Promise<void> {
  // the store side settles after the client's side: wait until its upload object is gone
  for (let i = 0; i < 200 && (await storage.list("uploads", { limit: 10 })).keys.length > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(await storage.stat(blobData(parseDigest(digest)))).toBeUndefined();
}

const flip = (b: Uint8Array, at: number) => {
  const c = b.slice();
  c[at] = c[at]! ^ 0xff;
  return c;
};

describe("pull-through: a blob that does not match never reaches the client whole", () => {
  const real = randomBytes(10 * CHUNK);
  const digest = sha256(real);
  const cases: { name: string; sent: Uint8Array; size: number | undefined }[] = [
    { name: "same length, last byte changed", sent: flip(real, real.byteLength - 1), size: real.byteLength },
    { name: "same length, first byte changed", sent: flip(real, 0), size: real.byteLength },
    { name: "shorter, the real size announced", sent: real.slice(0, 7 * CHUNK + 10), size: real.byteLength },
    { name: "shorter, its own size announced", sent: real.slice(0, 7 * CHUNK + 10), size: 7 * CHUNK + 10 },
    { name: "longer, its own size announced", sent: new Uint8Array([...real, 1, 2]), size: real.byteLength + 2 },
    { name: "longer than the size it announced", sent: new Uint8Array([...real, ...real]), size: real.byteLength },
  ];
  for (const c of cases) {
    it(`many chunks, ${c.name}: 200, then an error before the last chunk; nothing stored`, async () => {
      const { storage, response } = await pullThrough(c.sent, c.size, digest);
      expect(response.status).toBe(200);
      const { received, error } = await drain(response.body!);
      expect(error).toBeDefined();
      expect(received).toBeLessThan(Math.min(c.sent.byteLength, c.size ?? Infinity));
      await nothingStored(storage, digest);
    });
  }

  for (const [name, sent] of [
    ["one chunk, same length", flip(real.slice(0, 500), 3)],
    ["one chunk, shorter", real.slice(0, 400)],
    ["empty", new Uint8Array(0)],
  ] as const) {
    it(`${name}: judged before the answer, 502 UNKNOWN`, async () => {
      const small = real.slice(0, 500);
      const { storage, response } = await pullThrough(sent, sent.byteLength, sha256(small));
      expect(response.status).toBe(502);
      expect(await errorCode(response)).toBe("UNKNOWN");
      await nothingStored(storage, sha256(small));
    });
  }

  it("no size announced: stored and verified first, so a mismatch is a 502 and a match is served from storage", async () => {
    const bad = await pullThrough(flip(real, 5), undefined, digest);
    expect(bad.response.status).toBe(502);
    expect(await errorCode(bad.response)).toBe("UNKNOWN");
    await nothingStored(bad.storage, digest);
    const good = await pullThrough(real, undefined, digest);
    expect(good.response.status).toBe(200);
    expect(sha256(new Uint8Array(await good.response.arrayBuffer()))).toBe(digest);
    expect(await good.storage.stat(blobData(parseDigest(digest)))).toBeDefined();
  });

  it("a matching blob, one chunk or many, arrives whole", async () => {
    for (const bytes of [real.slice(0, 10), real, new Uint8Array(0)]) {
      const { response } = await pullThrough(bytes, bytes.byteLength, sha256(bytes));
      expect(response.status).toBe(200);
      expect(sha256(new Uint8Array(await response.arrayBuffer()))).toBe(sha256(bytes));
    }
  });
});
