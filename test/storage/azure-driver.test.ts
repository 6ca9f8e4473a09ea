/**
 * The Azure driver's own paths, on Azurite (test/storage/helpers/azurite.ts):
 * two driver instances (two processes) on one upload, a crashed writer's lease,
 * staged blocks for writes and appends beyond the block size (and an append to
 * a blob written by one Put Blob), listings continued by another instance,
 * what a page costs, injected 503/429 answers, and the errors that name the
 * cause without the key.
 */
import { describe, expect, it } from "vitest";
import { checked, StorageError, type StorageDriver } from "../../src/storage/driver.js";
import { azureStorage, type AzureStorageOptions } from "../../src/storage/azure/index.js";
import { acquireLease } from "../../src/storage/azure/lease.js";
import { AzureClient } from "../../src/storage/azure/client.js";
import type { AzureContext } from "../../src/storage/azure/context.js";
import { copyBlob, SYNC_COPY_LIMIT } from "../../src/storage/azure/move.js";
import { BlobNames } from "../../src/storage/azure/names.js";
import { collect, encoder, heldStream, randomBytes } from "../../src/testing/storage-contract/streams-fixtures.js";
import { AZURITE_ACCOUNT, AZURITE_KEY, freshRoot, useAzurite } from "./helpers/azurite.js";

const azurite = useAzurite({ container: "driver-test" });

function driver(extra: Partial<AzureStorageOptions> = {}): { store: StorageDriver; root: string } {
  const root = extra.rootDirectory ?? freshRoot("driver");
  return { store: checked(azureStorage({ ...azurite.options(), rootDirectory: root, ...extra })), root };
}

/** A fetch that counts requests and answers the first `failures` of them with `status`. */
function faultyFetch(failures = 0, status = 503): { fetch: typeof fetch; count: () => number; methods: string[] } {
  let seen = 0;
  const methods: string[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    seen++;
    methods.push(`${init?.method ?? "GET"} ${new URL(String(input)).searchParams.get("comp") ?? ""}`);
    if (seen <= failures) return new Response("<?xml version=\"1.0\"?><Error><Code>ServerBusy</Code><Message>busy</Message></Error>", { status });
    return fetch(input, init);
  };
  return { fetch: wrapped, count: () => seen, methods };
}

const text = async (store: StorageDriver, key: string): Promise<string> => new TextDecoder().decode(await collect((await store.read(key))!));

describe("azure driver: one writer across driver instances", () => {
  it("a move from another instance is refused while an append holds its body; it succeeds after", async () => {
    const a = driver();
    const b = driver({ rootDirectory: a.root });
    await a.store.append("up/data", encoder.encode("first"));
    const held = heldStream(encoder.encode("-late"), encoder.encode("-bytes"));
    const appending = a.store.append("up/data", held.stream, { expectedSize: 5, create: false });
    await held.started;
    await expect(b.store.move("up/data", "blob", { expectedSize: 5 })).rejects.toMatchObject({ code: "conflict" });
    await expect(b.store.append("up/data", encoder.encode("x"), { expectedSize: 5 })).rejects.toMatchObject({ code: "conflict" });
    held.release();
    expect(await appending).toBe(16);
    await b.store.move("up/data", "blob", { expectedSize: 16 });
    expect(await text(a.store, "blob")).toBe("first-late-bytes");
    expect(await a.store.stat("up/data")).toBeUndefined();
  });

  it("an append whose body is held longer than a lease keeps it (renewed): a move meanwhile is refused", async () => {
    const a = driver({ leaseSeconds: 15 });
    const b = driver({ rootDirectory: a.root, leaseSeconds: 15 });
    await a.store.append("up/data", encoder.encode("first"));
    const held = heldStream(encoder.encode("-slow"), encoder.encode("-body"));
    const appending = a.store.append("up/data", held.stream, { expectedSize: 5, create: false });
    await held.started;
    // Past the 15 s the lease was taken for: only a renewal keeps the move out.
    await new Promise((resolve) => setTimeout(resolve, 17_000));
    await expect(b.store.move("up/data", "blob", { expectedSize: 5 })).rejects.toMatchObject({ code: "conflict" });
    held.release();
    expect(await appending).toBe(15);
    expect(await text(a.store, "up/data")).toBe("first-slow-body");
  }, 60_000);

  it("a crashed writer's lease holds off appends and moves; a delete breaks it", async () => {
    const { store, root } = driver();
    await store.append("up/data", encoder.encode("abc"));
    const client = new AzureClient({ account: AZURITE_ACCOUNT, accountKey: AZURITE_KEY, container: "driver-test", serviceURL: new URL(azurite.serviceURL), maxRetries: 1, retryBaseMs: 10, fetch });
    // Taken and never released, as by a process killed mid-append.
    expect(await acquireLease(client, `${root}/up/data`, "append")).toBeDefined();
    await expect(store.append("up/data", encoder.encode("d"), { expectedSize: 3 })).rejects.toMatchObject({ code: "conflict" });
    await expect(store.move("up/data", "blob", { expectedSize: 3 })).rejects.toMatchObject({ code: "conflict" });
    expect(await text(store, "up/data")).toBe("abc");
    await store.deletePrefix("up");
    expect(await store.stat("up/data")).toBeUndefined();
    expect(await store.append("up/data", encoder.encode("new"), { expectedSize: 0 })).toBe(3);
  });
});

describe("azure driver: blocks", () => {
  const blockSize = 64 * 1024;

  it("writes a body larger than a block as staged blocks, and reads it back by range", async () => {
    const { store } = driver({ blockSize });
    const bytes = randomBytes(5 * blockSize + 123);
    expect(await store.write("big", bytes)).toBe(bytes.length);
    expect(Buffer.from(await collect((await store.read("big"))!)).equals(Buffer.from(bytes))).toBe(true);
    const part = await collect((await store.read("big", { offset: blockSize - 10, length: blockSize + 20 }))!);
    expect(Buffer.from(part).equals(Buffer.from(bytes.subarray(blockSize - 10, 2 * blockSize + 10)))).toBe(true);
  });

  it("appends to a blob written by one Put Blob (no blocks), beyond a block at a time", async () => {
    const { store } = driver({ blockSize });
    const head = randomBytes(1000);
    const tail = randomBytes(3 * blockSize + 7);
    await store.write("obj", head);
    expect(await store.append("obj", tail, { expectedSize: head.length })).toBe(head.length + tail.length);
    expect(await store.append("obj", encoder.encode("!"), { expectedSize: head.length + tail.length })).toBe(head.length + tail.length + 1);
    const all = await collect((await store.read("obj"))!);
    expect(Buffer.from(all).equals(Buffer.concat([head, tail, encoder.encode("!")]))).toBe(true);
  });
});

describe("azure driver: the copy of a move", () => {
  const context = (): AzureContext => ({
    client: new AzureClient({ account: AZURITE_ACCOUNT, accountKey: AZURITE_KEY, container: "driver-test", serviceURL: new URL(azurite.serviceURL), maxRetries: 1, retryBaseMs: 10, fetch }),
    names: new BlobNames(""), blockSize: 8 << 20, concurrency: 2, leaseSeconds: 60, maxRetries: 1,
  });

  for (const [how, size] of [["Copy Blob From URL (up to 256 MiB)", 5], ["Copy Blob (larger)", SYNC_COPY_LIMIT + 1]] as const) {
    it(`${how}: copies the bytes pinned to the ETag checked, and refuses a source changed since`, async () => {
      const { store, root } = driver();
      await store.write("src", encoder.encode("bytes"));
      const etag = (await context().client.send({ op: "t", method: "HEAD", blob: `${root}/src` })).headers.get("etag")!;
      await copyBlob(context(), `${root}/src`, etag, size, `${root}/dst`);
      expect(await text(store, "dst")).toBe("bytes");
      await store.write("src", encoder.encode("other"));
      await expect(copyBlob(context(), `${root}/src`, etag, size, `${root}/dst2`)).rejects.toMatchObject({ code: "conflict" });
      expect(await store.stat("dst2")).toBeUndefined();
    });
  }
});

describe("azure driver: listings", () => {
  it("a page continued by another instance (no remembered marker) is the same page", async () => {
    const a = driver();
    const keys = Array.from({ length: 30 }, (_, i) => `l/${String(i % 4)}/k${String(i).padStart(2, "0")}`).sort();
    await Promise.all(keys.map((k) => a.store.write(k, encoder.encode(k))));
    const first = await a.store.list("l", { limit: 10 });
    const fresh = driver({ rootDirectory: a.root }).store;
    const fromA = await a.store.list("l", { after: first.keys[9]!, limit: 10 });
    const fromFresh = await fresh.list("l", { after: first.keys[9]!, limit: 10 });
    expect(fromFresh).toEqual(fromA);
    expect([...first.keys, ...fromA.keys]).toEqual(keys.slice(0, 20));
  });

  it("a page that continues the page before costs one request", async () => {
    const counting = faultyFetch();
    const { store, root } = driver({ fetch: counting.fetch });
    const plain = driver({ rootDirectory: root }).store;
    await Promise.all(Array.from({ length: 40 }, (_, i) => plain.write(`p/k${String(i).padStart(2, "0")}`, encoder.encode("x"))));
    let after: string | undefined;
    const seen: string[] = [];
    for (let page = 0; page < 4; page++) {
      const before = counting.count();
      const result = await store.list("p", { limit: 10, ...(after ? { after } : {}) });
      expect(counting.count() - before).toBe(1);
      seen.push(...result.keys);
      after = result.keys[result.keys.length - 1];
    }
    expect(seen).toHaveLength(40);
  });
});

describe("azure driver: retries and errors", () => {
  it("retries 503 and 429 answers", async () => {
    for (const status of [503, 429]) {
      const faulty = faultyFetch(2, status);
      const { store } = driver({ fetch: faulty.fetch, retryBaseMs: 5 });
      await store.write("r", encoder.encode("retried"));
      expect(await text(store, "r")).toBe("retried");
      expect(faulty.count()).toBeGreaterThanOrEqual(4);
    }
  });

  it("refuses a lease length Azure does not offer", () => {
    for (const leaseSeconds of [14, 61, 1.5]) expect(() => driver({ leaseSeconds })).toThrow(/leaseSeconds/);
  });

  it("gives up after maxRetries with an io error naming the status", async () => {
    const { store } = driver({ fetch: faultyFetch(100).fetch, maxRetries: 2, retryBaseMs: 5 });
    const error = await store.write("r", encoder.encode("x")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: "io", message: expect.stringContaining("503 ServerBusy") });
  });

  it("a wrong key and a missing container are io errors that say so, never showing the key", async () => {
    const wrongKey = Buffer.from("not the account key at all").toString("base64");
    const bad = await driver({ accountKey: wrongKey }).store.write("k", encoder.encode("x")).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: "io", message: expect.stringMatching(/403 .*check the account name and key/) });
    expect(String((bad as Error).message)).not.toContain(wrongKey);
    const noContainer = driver({ container: "no-such-container" }).store;
    const missing = await noContainer.write("k", encoder.encode("x")).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: "io", message: expect.stringContaining("the container does not exist") });
    expect(String((missing as Error).message)).not.toContain(AZURITE_KEY);
    // Not "no such object": a stat or a read of a missing container fails.
    await expect(noContainer.stat("k")).rejects.toMatchObject({ code: "io", message: expect.stringContaining("the container does not exist") });
    await expect(noContainer.read("k")).rejects.toMatchObject({ code: "io" });
    await expect(noContainer.list("p")).rejects.toMatchObject({ code: "io" });
  });
});
