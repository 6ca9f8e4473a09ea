/**
 * "One writer, a final move" on S3 (issue 15), against a real radosgw: an
 * append and a move of the same key exclude each other through the writer-lock
 * object `<key>!writer`, also across driver instances (processes); a move
 * publishes exactly `expectedSize` bytes or nothing; a lock left behind by a
 * crash blocks only its key until deleted, and never shows in listings.
 */
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checked, type StorageDriver } from "../../src/storage/driver.js";
import { s3Storage, type S3StorageOptions } from "../../src/storage/s3/index.js";
import { freshRoot, rawKeys, readObject, useRadosgw } from "./helpers/rgw.js";

const rgw = useRadosgw();

function driver(root: string, extra: Partial<S3StorageOptions> = {}): StorageDriver {
  return checked(s3Storage({ ...rgw.options(), rootDirectory: root, ...extra }));
}



/** Leave a writer lock in the bucket as a crashed process would. */
async function plantLock(root: string, key: string): Promise<void> {
  const response = await rgw.request("PUT", `/${rgw.bucket}/${root}/${key}!writer`, { body: "left by a crashed process" });
  expect(response.status).toBe(200);
}

function sha(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** A body whose bytes arrive only once `held` resolves, like a PATCH that sent its headers and holds its body. */
function heldBody(held: Promise<void>, data: Uint8Array): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      if (sent) return c.close();
      await held;
      sent = true;
      c.enqueue(data);
    },
  });
}

/**
 * A fetch that counts requests and reports when the driver has gone quiet
 * (no request in flight for `ms` after at least one was sent).
 */
function watchedFetch(): { fetch: typeof fetch; log: string[]; quiet: (ms?: number) => Promise<void> } {
  let inFlight = 0;
  let last = Date.now();
  const log: string[] = [];
  const watched: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const method = init?.method ?? "GET";
    log.push(`${method} ${decodeURIComponent(url.pathname)}${url.search}`);
    inFlight++;
    try {
      return await fetch(input, init);
    } finally {
      inFlight--;
      last = Date.now();
    }
  };
  const quiet = async (ms = 150): Promise<void> => {
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && (log.length === 0 || inFlight > 0 || Date.now() - last < ms)) {
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { fetch: watched, log, quiet };
}

describe("s3 driver: one writer, a final move (radosgw)", () => {
  it("a move while an append's body is held open is refused with conflict; the append then completes", async () => {
    const root = freshRoot("held");
    const watch = watchedFetch();
    const appender = driver(root, { fetch: watch.fetch });
    const mover = driver(root); // another process
    const chunk1 = randomBytes(1000);
    const chunk2 = randomBytes(2000);
    expect(await appender.append("up/data", chunk1, { expectedSize: 0 })).toBe(1000);
    // PATCH #2: headers sent, body held.
    const body = gate();
    watch.log.length = 0;
    const appending = appender.append("up/data", heldBody(body.wait, chunk2), { expectedSize: 1000, create: false });
    await watch.quiet();
    // PUT ?digest=<digest of chunk 1>: the commit is refused, nothing is published.
    await expect(mover.move("up/data", "blobs/x/data", { expectedSize: 1000 })).rejects.toMatchObject({ code: "conflict" });
    await expect(mover.move("up/data", "blobs/x/data")).rejects.toMatchObject({ code: "conflict" });
    expect(await mover.stat("blobs/x/data")).toBeUndefined();
    // The held body arrives: the append completes and the upload has both chunks.
    body.open();
    expect(await appending).toBe(3000);
    const both = Buffer.concat([chunk1, chunk2]);
    expect(sha(await readObject(mover, "up/data"))).toBe(sha(both));
    // The commit that hashed chunk 1 only is refused; one that hashed both goes through.
    await expect(mover.move("up/data", "blobs/x/data", { expectedSize: 1000 })).rejects.toMatchObject({ code: "conflict" });
    await mover.move("up/data", "blobs/x/data", { expectedSize: 3000 });
    expect(sha(await readObject(mover, "blobs/x/data"))).toBe(sha(both));
    expect(await rawKeys(rgw, root + "/")).toEqual([`${root}/blobs/x/data`]);
  });

  it("an append started after a move began is refused and nothing of it reaches the moved object", async () => {
    const root = freshRoot("late");
    const target = gate();
    const reached = gate();
    // The mover's request that creates the target is held until the test lets it go.
    const holding: typeof fetch = async (input, init) => {
      if ((init?.method ?? "GET") === "PUT" && decodeURIComponent(new URL(String(input)).pathname).endsWith(`/${root}/blobs/y/data`)) {
        reached.open();
        await target.wait;
      }
      return fetch(input, init);
    };
    const appender = driver(root);
    const mover = driver(root, { fetch: holding });
    const chunk1 = randomBytes(1000);
    await appender.append("up/data", chunk1, { expectedSize: 0 });
    const moving = mover.move("up/data", "blobs/y/data", { expectedSize: 1000 });
    await reached.wait;
    // The move has begun: appends to its source are refused and change nothing.
    await expect(appender.append("up/data", randomBytes(500), { expectedSize: 1000, create: false })).rejects.toMatchObject({ code: "conflict" });
    await expect(appender.append("up/data", randomBytes(500), { expectedSize: 1000 })).rejects.toMatchObject({ code: "conflict" });
    // Without an expected size an append waits for the move, then starts a new object.
    const unsized = appender.append("up/data", Buffer.from("late"));
    await new Promise((r) => setTimeout(r, 200));
    target.open();
    await moving;
    expect(await unsized).toBe(4);
    expect((await readObject(appender, "up/data")).toString()).toBe("late");
    await appender.delete("up/data");
    // After the move: the source is gone; continuing it is refused and creates nothing.
    await expect(appender.append("up/data", randomBytes(500), { expectedSize: 1000, create: false })).rejects.toMatchObject({ code: "conflict" });
    await expect(appender.append("up/data", randomBytes(500), { create: false })).rejects.toMatchObject({ code: "conflict" });
    expect(await appender.stat("up/data")).toBeUndefined();
    expect(sha(await readObject(appender, "blobs/y/data"))).toBe(sha(chunk1));
    expect(await rawKeys(rgw, root + "/")).toEqual([`${root}/blobs/y/data`]);
  });

  it("two appends to one key at once: the second is refused while the first holds its body", async () => {
    const root = freshRoot("two");
    const a = driver(root);
    const b = driver(root);
    await a.append("up/data", Buffer.from("base"));
    const body = gate();
    const first = a.append("up/data", heldBody(body.wait, Buffer.from("+first")), { expectedSize: 4 });
    await new Promise((r) => setTimeout(r, 300));
    await expect(b.append("up/data", Buffer.from("+second"), { expectedSize: 4 })).rejects.toMatchObject({ code: "conflict" });
    body.open();
    expect(await first).toBe(10);
    expect((await readObject(b, "up/data")).toString()).toBe("base+first");
  });

  it("a move with an expectedSize the object does not have moves nothing", async () => {
    const root = freshRoot("size");
    const store = driver(root);
    await store.append("up/a", Buffer.from("hello "));
    await store.append("up/a", Buffer.from("world"), { expectedSize: 6 });
    await store.write("up/p", Buffer.from("plain"));
    for (const [key, wrong] of [["up/a", 6], ["up/a", 12], ["up/p", 4], ["up/p", 0]] as const) {
      await expect(store.move(key, "blobs/t", { expectedSize: wrong })).rejects.toMatchObject({ code: "conflict" });
    }
    expect(await store.stat("blobs/t")).toBeUndefined();
    expect((await readObject(store, "up/a")).toString()).toBe("hello world");
    expect((await readObject(store, "up/p")).toString()).toBe("plain");
    await expect(store.move("up/none", "blobs/t", { expectedSize: 0 })).rejects.toMatchObject({ code: "not_found" });
    await store.move("up/a", "blobs/a", { expectedSize: 11 });
    await store.move("up/p", "blobs/p", { expectedSize: 5 });
    expect((await readObject(store, "blobs/a")).toString()).toBe("hello world");
    expect((await readObject(store, "blobs/p")).toString()).toBe("plain");
    expect(await rawKeys(rgw, root + "/")).toEqual([`${root}/blobs/a`, `${root}/blobs/p`]);
  });

  it("append with create: false refuses a missing object and creates nothing", async () => {
    const root = freshRoot("create");
    const store = driver(root);
    await expect(store.append("up/none", Buffer.from("x"), { create: false })).rejects.toMatchObject({ code: "conflict" });
    await expect(store.append("up/none", Buffer.from("x"), { create: false, expectedSize: 0 })).rejects.toMatchObject({ code: "conflict" });
    await expect(store.append("up/none", new Uint8Array(0), { create: false })).rejects.toMatchObject({ code: "conflict" });
    expect(await store.stat("up/none")).toBeUndefined();
    expect(await rawKeys(rgw, root + "/")).toEqual([]);
    // An existing object, appended or written, continues.
    await store.append("up/a", new Uint8Array(0));
    expect(await store.append("up/a", Buffer.from("ab"), { create: false, expectedSize: 0 })).toBe(2);
    await store.write("up/w", Buffer.from("w"));
    expect(await store.append("up/w", Buffer.from("x"), { create: false })).toBe(2);
  });

  it("a lock left by a crashed process blocks appends and moves of its key only, until delete or deletePrefix", async () => {
    const root = freshRoot("stale");
    const store = driver(root);
    await store.append("up/u1/data", Buffer.from("abc"));
    await store.append("up/u2/data", Buffer.from("def"));
    await plantLock(root, "up/u1/data");
    await expect(store.append("up/u1/data", Buffer.from("x"), { expectedSize: 3 })).rejects.toMatchObject({ code: "conflict" });
    await expect(store.move("up/u1/data", "blobs/1", { expectedSize: 3 })).rejects.toMatchObject({ code: "conflict" });
    // Readers do not care, and the key lists once.
    expect((await store.stat("up/u1/data"))?.size).toBe(3);
    expect((await readObject(store, "up/u1/data")).toString()).toBe("abc");
    expect((await store.list("up")).keys).toEqual(["up/u1/data", "up/u2/data"]);
    // Other keys are not affected.
    expect(await store.append("up/u2/data", Buffer.from("g"), { expectedSize: 3 })).toBe(4);
    await store.move("up/u2/data", "blobs/2", { expectedSize: 4 });
    // deletePrefix (how the registry removes abandoned uploads) clears the lock with the object.
    await store.deletePrefix("up");
    expect(await rawKeys(rgw, `${root}/up`)).toEqual([]);
    expect(await store.append("up/u1/data", Buffer.from("new"), { expectedSize: 0 })).toBe(3);
    await store.move("up/u1/data", "blobs/1", { expectedSize: 3 });
    expect((await readObject(store, "blobs/1")).toString()).toBe("new");
    // So does delete.
    await store.append("up/u3/data", Buffer.from("xyz"));
    await plantLock(root, "up/u3/data");
    await store.delete("up/u3/data");
    expect(await rawKeys(rgw, `${root}/up`)).toEqual([]);
  });

  it("list, stat and read ignore lock objects: a lock-only key does not exist", async () => {
    const root = freshRoot("list");
    const store = driver(root);
    await store.write("l/a", Buffer.from("a"));
    await store.append("l/b", Buffer.from("b1"));
    await store.append("l/b", Buffer.from("b2"), { expectedSize: 2 });
    await plantLock(root, "l/b");
    await plantLock(root, "l/c");
    await plantLock(root, "l/d/e");
    await store.write("l/f", Buffer.from("f"));
    expect(await store.list("l")).toEqual({ keys: ["l/a", "l/b", "l/f"], truncated: false });
    const paged: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.list("l", { limit: 1, ...(after ? { after } : {}) });
      paged.push(...page.keys);
      if (!page.truncated) break;
      after = page.keys[page.keys.length - 1];
    }
    expect(paged).toEqual(["l/a", "l/b", "l/f"]);
    expect(await store.list("l", { after: "l/b", limit: 1 })).toEqual({ keys: ["l/f"], truncated: false });
    expect(await store.list("l", { after: "l/b", limit: 0 })).toEqual({ keys: [], truncated: true });
    expect(await store.list("l", { after: "l/f", limit: 0 })).toEqual({ keys: [], truncated: false });
    expect(await store.list("l/d")).toEqual({ keys: [], truncated: false });
    expect(await store.stat("l/c")).toBeUndefined();
    expect(await store.read("l/c")).toBeUndefined();
    expect((await store.stat("l/b"))?.size).toBe(4);
    await expect(store.move("l/c", "l/g")).rejects.toMatchObject({ code: expect.stringMatching(/^(not_found|conflict)$/) });
  });

  it("a delete or deletePrefix during an append: the append takes its bytes back and the object stays deleted", async () => {
    const root = freshRoot("del");
    const a = driver(root);
    const b = driver(root); // another process cancels the upload
    for (const how of ["delete", "deletePrefix"] as const) {
      for (const start of ["appended", "empty"] as const) {
        const key = `up/${how}-${start}/data`;
        // An upload with bytes in part objects, or one just started (an empty plain object).
        if (start === "appended") await a.append(key, Buffer.from("abc"));
        else await a.write(key, new Uint8Array(0));
        const size = start === "appended" ? 3 : 0;
        const body = gate();
        const appending = a.append(key, heldBody(body.wait, Buffer.from("late bytes")), { expectedSize: size, create: false });
        await new Promise((r) => setTimeout(r, 300));
        if (how === "delete") await b.delete(key);
        else await b.deletePrefix(key.slice(0, key.lastIndexOf("/")));
        body.open();
        await expect(appending).rejects.toMatchObject({ code: "conflict" });
        expect(await b.stat(key)).toBeUndefined();
        await expect(b.append(key, Buffer.from("z"), { expectedSize: size + 10, create: false })).rejects.toMatchObject({ code: "conflict" });
      }
    }
    expect(await b.list("up")).toEqual({ keys: [], truncated: false });
    expect(await rawKeys(rgw, root + "/")).toEqual([]);
  });

  it("an append that began while a deletePrefix was removing its upload does not bring it back", async () => {
    const root = freshRoot("delrace");
    const deleting = gate();
    const reached = gate();
    // The deleter has listed the upload and its DELETE of the (empty) upload object is held.
    const holding: typeof fetch = async (input, init) => {
      if ((init?.method ?? "GET") === "DELETE" && decodeURIComponent(new URL(String(input)).pathname).endsWith("/up/x/data")) {
        reached.open();
        await deleting.wait;
      }
      return fetch(input, init);
    };
    const a = driver(root);
    const b = driver(root, { fetch: holding });
    await a.write("up/x/data", new Uint8Array(0)); // an upload just started
    const cancelling = b.deletePrefix("up/x");
    await reached.wait;
    // A PATCH arrives: the upload still exists; its body is held.
    const body = gate();
    const appending = a.append("up/x/data", heldBody(body.wait, Buffer.from("late bytes")), { expectedSize: 0, create: false });
    await new Promise((r) => setTimeout(r, 300));
    deleting.open();
    await cancelling;
    body.open();
    await expect(appending).rejects.toMatchObject({ code: "conflict" });
    expect(await a.stat("up/x/data")).toBeUndefined();
    expect(await rawKeys(rgw, root + "/")).toEqual([]);
  });

  it("part objects past a gap (left by a crash) do not make a key exist, in stat or list", async () => {
    const root = freshRoot("gap");
    const store = driver(root);
    await store.write("g/a", Buffer.from("a"));
    const orphan = await rgw.request("PUT", `/${rgw.bucket}/${root}/g/b!0000000000000005`, { body: "orphan" });
    expect(orphan.status).toBe(200);
    expect(await store.stat("g/b")).toBeUndefined();
    expect((await store.list("g")).keys).toEqual(["g/a"]);
    expect(await store.list("g", { after: "g/a", limit: 0 })).toEqual({ keys: [], truncated: false });
    // An append to it starts at 0 and then meets the orphan: refused, nothing lost.
    await expect(store.append("g/b", Buffer.from("12345xyz"), { create: false })).rejects.toMatchObject({ code: "conflict" });
    await store.delete("g/b");
    expect(await rawKeys(rgw, `${root}/g/b`)).toEqual([]);
  });

  it("locks are released after every append and move, failed ones included", async () => {
    const root = freshRoot("release");
    const store = driver(root);
    await store.append("k", Buffer.from("ok"));
    const failure = new Error("client went away");
    let sent = false;
    const failing = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent) return c.error(failure);
        sent = true;
        c.enqueue(Buffer.from("partial"));
      },
    });
    await expect(store.append("k", failing, { expectedSize: 2 })).rejects.toBeTruthy();
    await expect(store.append("k", Buffer.from("x"), { expectedSize: 5 })).rejects.toMatchObject({ code: "conflict" });
    await expect(store.move("k", "t", { expectedSize: 5 })).rejects.toMatchObject({ code: "conflict" });
    await expect(store.move("none", "t")).rejects.toMatchObject({ code: "not_found" });
    expect((await rawKeys(rgw, root + "/")).filter((k) => k.endsWith("!writer"))).toEqual([]);
    const size = (await store.stat("k"))!.size;
    expect(await store.append("k", Buffer.from("!"), { expectedSize: size })).toBe(size + 1);
    await store.move("k", "t", { expectedSize: size + 1 });
    expect(await rawKeys(rgw, root + "/")).toEqual([`${root}/t`]);
  });

  it("a lock PUT whose answer was lost and that was retried recognises its own lock", async () => {
    const root = freshRoot("lost");
    let lost = 0;
    const losing: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if ((init?.method ?? "GET") === "PUT" && String(input).endsWith("%21writer") && lost < 2) {
        lost++;
        await response.body?.cancel();
        throw new TypeError("fetch failed"); // the lock was created, the answer never arrived
      }
      return response;
    };
    const store = driver(root, { fetch: losing, retryBaseMs: 1 });
    expect(await store.append("k", Buffer.from("abc"), { expectedSize: 0 })).toBe(3);
    await store.move("k", "t", { expectedSize: 3 });
    expect(lost).toBe(2);
    expect(await rawKeys(rgw, root + "/")).toEqual([`${root}/t`]);
  });

  it("costs a lock PUT and DELETE per append and move, and a LIST that checks an append's outcome", async () => {
    const root = freshRoot("cost");
    const watch = watchedFetch();
    const store = driver(root, { fetch: watch.fetch });
    await store.append("up/data", randomBytes(1000));
    const count = async (what: string, run: () => Promise<unknown>): Promise<string[]> => {
      watch.log.length = 0;
      await run();
      const methods = watch.log.map((l) => l.replace(/\?.*$/, (q) => (q.includes("list-type") ? "?list" : q.includes("delete") ? "?delete" : "")));
      console.log(`[s3 cost] ${what}: ${watch.log.length} requests\n  ${methods.join("\n  ")}`);
      return watch.log;
    };
    const append = await count("append 1000 B at 1000", () => store.append("up/data", randomBytes(1000), { expectedSize: 1000 }));
    expect(append.filter((l) => l.endsWith("!writer"))).toHaveLength(2);
    expect(append).toHaveLength(5); // lock, list, part, list again (lock still ours, parts intact), unlock
    const move = await count("move of 2 small part objects", () => store.move("up/data", "blobs/c", { expectedSize: 2000 }));
    expect(move.filter((l) => l.endsWith("!writer"))).toHaveLength(2);
    // lock, list, 2 GETs, PUT, delete parts, unlock: no listing of the target's parts (issue 47)
    expect(move).toHaveLength(7);
  });
});
