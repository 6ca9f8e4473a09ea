/**
 * S3-specific behaviour of the s3 driver against a real radosgw: multipart
 * writes, append+move assembly, two driver instances on one upload, retries on
 * injected faults, listing past 1000 keys, special key characters, throughput.
 */
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { StorageError, checked, type StorageDriver } from "../../src/storage/driver.js";
import { s3Storage, type S3StorageOptions } from "../../src/storage/s3/index.js";
import { children, parseXml } from "../../src/storage/s3/xml.js";
import { freshRoot, rawKeys, readObject, useRadosgw } from "./helpers/rgw.js";

const MiB = 1024 * 1024;
const rgw = useRadosgw();

function driver(root: string, extra: Partial<S3StorageOptions> = {}): StorageDriver {
  return checked(s3Storage({ ...rgw.options(), rootDirectory: root, ...extra }));
}



function sha(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

function chunked(data: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(c) {
      if (offset >= data.byteLength) return c.close();
      c.enqueue(data.slice(offset, offset + size));
      offset += size;
    },
  });
}

describe("s3 driver (radosgw)", () => {
  it("writes bodies larger than partSize as multipart uploads, bytes intact", async () => {
    const root = freshRoot("mp");
    const store = driver(root, { partSize: 5 * MiB });
    const data = randomBytes(12 * MiB + 12345);
    expect(await store.write("mp/bytes", data)).toBe(data.byteLength);
    expect(await store.write("mp/stream", chunked(data, 64 * 1024 + 7))).toBe(data.byteLength);
    for (const key of ["mp/bytes", "mp/stream"]) {
      expect(sha(await readObject(store, key))).toBe(sha(data));
      expect((await store.stat(key))?.size).toBe(data.byteLength);
      // A multipart object's ETag is "<md5 of part md5s>-<parts>": 3 parts of 5 MiB.
      const head = await rgw.request("HEAD", `/${rgw.bucket}/${root}/${key}`);
      expect(head.headers.get("etag")).toMatch(/-3"?$/);
    }
    expect(sha(await readObject(store, "mp/stream", { offset: 5 * MiB - 10, length: 5 * MiB + 20 }))).toBe(
      sha(data.subarray(5 * MiB - 10, 10 * MiB + 10)),
    );
    // Exactly partSize goes as a single PUT.
    const exact = randomBytes(5 * MiB);
    await store.write("mp/exact", chunked(exact, MiB));
    expect(sha(await readObject(store, "mp/exact"))).toBe(sha(exact));
    await store.deletePrefix("mp");
    expect(await rawKeys(rgw, root + "/")).toEqual([]);
  });

  it("a failed multipart write leaves the old object and no multipart upload behind", async () => {
    const root = freshRoot("mpfail");
    const store = driver(root, { partSize: 5 * MiB });
    await store.write("k", new TextEncoder().encode("old"));
    let sent = 0;
    const failure = new Error("client went away");
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ === 12) c.error(failure);
        else c.enqueue(randomBytes(MiB));
      },
    });
    await expect(store.write("k", body)).rejects.toSatisfy((e: unknown) => (e as { cause?: unknown }).cause === failure);
    expect((await readObject(store, "k")).toString()).toBe("old");
    const uploads = await rgw.request("GET", `/${rgw.bucket}?uploads=&prefix=${root}`);
    expect(children(parseXml(await uploads.text()), "Upload")).toHaveLength(0);
  });

  it("assembles many small appends and a few large ones on move", async () => {
    const root = freshRoot("am");
    const store = driver(root, { partSize: 5 * MiB });
    const pieces: Uint8Array[] = [];
    for (let i = 0; i < 30; i++) pieces.push(randomBytes(100_000 + i * 1000)); // small (< 5 MiB): merged
    pieces.push(randomBytes(6 * MiB)); // large: split in part objects of 5 MiB + 1 MiB
    for (let i = 0; i < 5; i++) pieces.push(randomBytes(300_000));
    pieces.push(randomBytes(5 * MiB)); // exactly one part: copied server-side
    pieces.push(randomBytes(1234));
    let size = 0;
    for (const [i, piece] of pieces.entries()) {
      const body = i % 2 ? chunked(piece, 32 * 1024) : piece;
      size = await store.append("uploads/u/data", body, { expectedSize: size });
    }
    const all = Buffer.concat(pieces);
    expect(size).toBe(all.byteLength);
    expect((await store.stat("uploads/u/data"))?.size).toBe(all.byteLength);
    expect(sha(await readObject(store, "uploads/u/data"))).toBe(sha(all));
    // Ranges that cross part objects.
    for (const [offset, length] of [[99_999, 2], [3_000_000, 6 * MiB], [all.byteLength - 10, 100]] as const) {
      expect(sha(await readObject(store, "uploads/u/data", { offset, length }))).toBe(sha(all.subarray(offset, offset + length)));
    }
    expect((await store.list("uploads")).keys).toEqual(["uploads/u/data"]);
    await store.move("uploads/u/data", "blobs/b/data");
    expect(sha(await readObject(store, "blobs/b/data"))).toBe(sha(all));
    expect(await store.stat("uploads/u/data")).toBeUndefined();
    expect(await rawKeys(rgw, root + "/")).toEqual([`${root}/blobs/b/data`]);
  });

  it("two driver instances (two processes) append alternately to one upload", async () => {
    const root = freshRoot("two");
    const a = driver(root);
    const b = driver(root);
    const pieces = Array.from({ length: 12 }, (_, i) => randomBytes(50_000 + i));
    let size = 0;
    for (const [i, piece] of pieces.entries()) {
      const store = i % 2 ? b : a;
      // The other instance's stale view: its expectedSize is checked against the parts in S3.
      await expect(store.append("up/data", piece, { expectedSize: size + 1 })).rejects.toMatchObject({ code: "conflict" });
      size = await store.append("up/data", piece, { expectedSize: size });
    }
    expect(sha(await readObject(a, "up/data"))).toBe(sha(Buffer.concat(pieces)));
    // Racing at one offset from both instances: the writer lock (and If-None-Match on the part) lets exactly one win.
    const results = await Promise.allSettled([a, b, a, b].map((s, i) => s.append("up/data", Buffer.from(`racer${i}`), { expectedSize: size })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect((r.reason as StorageError).code).toBe("conflict");
    await b.move("up/data", "done/data");
    const final = await readObject(a, "done/data");
    expect(final.subarray(0, size).equals(Buffer.concat(pieces))).toBe(true);
    expect(final.subarray(size).toString()).toMatch(/^racer\d$/);
  });

  it("appends without expectedSize from two instances land one after the other", async () => {
    const root = freshRoot("noexp");
    const a = driver(root);
    const b = driver(root);
    const bodies = Array.from({ length: 6 }, (_, i) => Buffer.from(`<${i}>`));
    await Promise.all(bodies.map((body, i) => (i % 2 ? a : b).append("k", body)));
    const text = (await readObject(a, "k")).toString();
    expect(text.length).toBe(18);
    for (let i = 0; i < 6; i++) expect(text).toContain(`<${i}>`);
  });

  it("retries injected 503 SlowDown and network errors, with backoff", async () => {
    const root = freshRoot("retry");
    let calls = 0;
    let faults = 0;
    const flaky: typeof fetch = async (input, init) => {
      calls++;
      if (calls % 2 === 1) {
        faults++;
        if (faults % 3 === 0) throw new TypeError("fetch failed");
        return new Response(`<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`, { status: 503 });
      }
      return fetch(input, init);
    };
    const store = driver(root, { fetch: flaky, retryBaseMs: 5, partSize: 5 * MiB });
    const data = randomBytes(11 * MiB);
    expect(await store.write("big", chunked(data, MiB))).toBe(data.byteLength); // multipart: every part retried once
    expect(sha(await readObject(store, "big"))).toBe(sha(data));
    expect(await store.append("up", Buffer.from("abc"))).toBe(3);
    expect(await store.append("up", Buffer.from("def"), { expectedSize: 3 })).toBe(6);
    await store.move("up", "moved");
    expect((await readObject(store, "moved")).toString()).toBe("abcdef");
    expect((await store.list("big")).keys).toEqual([]);
    expect(await store.stat("up")).toBeUndefined();
    expect(faults).toBeGreaterThan(10);
  });

  it("resumes a read whose connection breaks mid-way, from the byte it stopped at", async () => {
    const root = freshRoot("resume");
    let breaks = 0;
    const breaking: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = String(input);
      if ((init?.method ?? "GET") !== "GET" || !url.includes("/obj") || breaks >= 2 || response.status >= 300) return response;
      breaks++;
      // Deliver about 1 MiB, then fail like a reset connection.
      const reader = response.body!.getReader();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          if (sent >= MiB) {
            await reader.cancel();
            return c.error(new TypeError("terminated"));
          }
          const { done, value } = await reader.read();
          if (done) return c.close();
          sent += value.byteLength;
          c.enqueue(value);
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const store = driver(root, { fetch: breaking, partSize: 5 * MiB });
    const data = randomBytes(7 * MiB);
    await store.write("obj", data);
    breaks = 0;
    expect(sha(await readObject(store, "obj"))).toBe(sha(data));
    expect(breaks).toBe(2); // broke twice, resumed twice
    breaks = 0;
    expect(sha(await readObject(store, "obj", { offset: 100, length: 5 * MiB }))).toBe(sha(data.subarray(100, 100 + 5 * MiB)));
    // An appended object: each part object resumes on its own.
    await store.append("obj-up", data.subarray(0, 3 * MiB));
    await store.append("obj-up", data.subarray(3 * MiB), { expectedSize: 3 * MiB });
    breaks = 0;
    expect(sha(await readObject(store, "obj-up"))).toBe(sha(data));
    // Resuming needs the same object: a replaced one fails the read.
    breaks = 1;
    const stream = (await store.read("obj"))!;
    const reader = stream.getReader();
    await reader.read();
    await store.write("obj", randomBytes(7 * MiB));
    breaks = 0;
    const error = await (async () => {
      for (;;) if ((await reader.read()).done) return undefined;
    })().catch((e: unknown) => e);
    // Either the first connection delivered everything already, or the resume was refused.
    if (error) expect((error as StorageError).message).toMatch(/changed while being read/);
  });

  it("gives up after maxRetries with an io error that names no secret", async () => {
    const root = freshRoot("giveup");
    let calls = 0;
    const down: typeof fetch = async () => {
      calls++;
      return new Response("<Error><Code>ServiceUnavailable</Code></Error>", { status: 503 });
    };
    const store = driver(root, { fetch: down, maxRetries: 2, retryBaseMs: 1 });
    const error = (await store.write("k", Buffer.from("x")).catch((e: unknown) => e)) as StorageError;
    expect(error).toBeInstanceOf(StorageError);
    expect(error.code).toBe("io");
    expect(error.message).toContain("503 ServiceUnavailable");
    expect(calls).toBe(3);
    const denied = driver(root, { secretAccessKey: "wrong-secret-value" });
    const e2 = (await denied.write("k", Buffer.from("x")).catch((e: unknown) => e)) as StorageError;
    expect(e2.code).toBe("io");
    expect(e2.message).toMatch(/403/);
    for (const e of [error, e2]) {
      const text = `${e.message} ${String(e.stack)} ${JSON.stringify(e)}`;
      expect(text).not.toContain(rgw.secretAccessKey);
      expect(text).not.toContain("wrong-secret-value");
      expect(text).not.toContain("Signature=");
    }
  });

  it("lists more than 1000 keys across pages, each page from start-after, with sizes and times on request", async () => {
    const root = freshRoot("many");
    const store = driver(root);
    const keys = Array.from({ length: 1100 }, (_, i) => `d/${String(i % 10)}/k${String(i).padStart(4, "0")}`).sort();
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => store.write(k, Buffer.from(k))));
    await store.append("d/0/k0500", Buffer.from("+appended")); // part objects never show in listings
    expect(await store.list("d")).toEqual({ keys, truncated: false });
    const paged: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.list("d", { limit: 400, ...(after ? { after } : {}) });
      paged.push(...page.keys);
      if (!page.truncated) break;
      after = page.keys[page.keys.length - 1];
    }
    expect(paged).toEqual(keys);

    // A page starts where the last one ended (start-after) and reads one page, never what lies
    // before it; with info, plain objects carry the listing's size and time.
    const requests: URLSearchParams[] = [];
    const answers: Promise<string>[] = [];
    const counting = driver(root, {
      fetch: async (input, init) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        const response = await fetch(input, init);
        if (url.searchParams.get("list-type") === "2") {
          requests.push(url.searchParams);
          answers.push(response.clone().text());
        }
        return response;
      },
    });
    const first = await counting.list("d", { limit: 1000, info: true });
    expect([first.keys, first.truncated]).toEqual([keys.slice(0, 1000), true]);
    expect(first.info?.map((info, i) => (info ? info.size : keys[i]))).toEqual(keys.slice(0, 1000).map((k) => (k === "d/0/k0500" ? k : k.length)));
    // The part objects of d/0/k0500 hide in the first answer: more requests follow, each from after the last
    // object of the answer before it, for the keys still missing (+1, to learn whether more follow). How many
    // keys an answer completes is read from the answer itself: the bucket may still list the appended object's
    // plain copy or writer lock for a moment after the append returned, and S3 (radosgw under load) may answer
    // fewer than max-keys while saying more follow.
    const raws = await Promise.all(answers.map(async (a) => [...(await a).matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!)));
    expect(raws.flat().filter((k) => k.includes("!")).every((k) => k.startsWith(`${root}/d/0/k0500!`))).toBe(true);
    expect(requests.length).toBeGreaterThan(1);
    expect([requests[0]!.get("start-after"), requests[0]!.get("max-keys")]).toEqual([null, "1000"]);
    const seen = new Set<string>();
    for (let i = 1; i < requests.length; i++) {
      for (const k of raws[i - 1]!) seen.add(k.split("!")[0]!);
      expect([requests[i]!.get("start-after"), requests[i]!.get("max-keys")]).toEqual([raws[i - 1]!.at(-1), String(Math.min(1000, 1000 - seen.size + 1))]);
    }
    requests.length = 0;
    answers.length = 0;
    const second = await counting.list("d", { after: first.keys[999]!, limit: 1000 });
    expect([second.keys, second.truncated, second.info]).toEqual([keys.slice(1000), false, undefined]);
    // One request unless the store answers short; never a continuation token, each from after the answer before.
    const rawsAfter = await Promise.all(answers.map(async (a) => [...(await a).matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!)));
    expect(requests.map((q) => [q.get("start-after"), q.get("continuation-token")])).toEqual(
      requests.map((_, i) => [i === 0 ? `${root}/${keys[999]}!~` : rawsAfter[i - 1]!.at(-1), null]),
    );
    await store.deletePrefix("d");
    expect(await rawKeys(rgw, root + "/")).toEqual([]);
  }, 120_000);

  it("handles keys with + = @ : in every operation", async () => {
    const root = freshRoot("chars");
    const store = driver(root);
    const key = "x/a+b=c@d:e/sha256:0f+=@";
    await store.write(key, Buffer.from("plain"));
    expect((await readObject(store, key)).toString()).toBe("plain");
    expect((await store.stat(key))?.size).toBe(5);
    await store.append(key + "-up", Buffer.from("12"));
    await store.append(key + "-up", Buffer.from("34"), { expectedSize: 2 });
    expect((await store.list("x")).keys).toEqual([key, key + "-up"]);
    await store.move(key + "-up", "y/+@:=");
    await store.move(key, "y/+@:=2");
    expect((await readObject(store, "y/+@:=")).toString()).toBe("1234");
    expect((await readObject(store, "y/+@:=2")).toString()).toBe("plain");
    expect((await store.list("y")).keys).toEqual(["y/+@:=", "y/+@:=2"]);
    expect(await rawKeys(rgw, `${root}/y/`)).toEqual([`${root}/y/+@:=`, `${root}/y/+@:=2`]);
    await store.deletePrefix("y");
    expect((await store.list("x")).keys).toEqual([]);
  });

  it("appending to a written object keeps its bytes", async () => {
    const store = driver(freshRoot("wa"));
    await store.write("k", Buffer.from("written"));
    expect(await store.append("k", Buffer.from("+more"), { expectedSize: 7 })).toBe(12);
    expect((await readObject(store, "k")).toString()).toBe("written+more");
    await store.write("k", Buffer.from("over"));
    expect((await readObject(store, "k")).toString()).toBe("over");
    await store.delete("k");
    expect(await store.stat("k")).toBeUndefined();
  });

  it("measures 256 MiB throughput with UNSIGNED-PAYLOAD and with signed payloads", async () => {
    const root = freshRoot("tp");
    const figures: string[] = [];
    for (const signPayload of [false, true]) {
      const store = driver(root, { signPayload });
      const block = randomBytes(MiB);
      let n = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (n++ === 256) return c.close();
          c.enqueue(block.slice());
        },
      }, { highWaterMark: 1 });
      let t0 = performance.now();
      await store.write("tp", body);
      const write = 256 / ((performance.now() - t0) / 1000);
      t0 = performance.now();
      let size = 0;
      for await (const chunk of (await store.read("tp")) as unknown as AsyncIterable<Uint8Array>) size += chunk.byteLength;
      const read = 256 / ((performance.now() - t0) / 1000);
      expect(size).toBe(256 * MiB);
      figures.push(`${signPayload ? "signed  " : "unsigned"} write ${write.toFixed(0)} MiB/s, read ${read.toFixed(0)} MiB/s`);
      await store.delete("tp");
    }
    console.log(`[s3 throughput, radosgw memstore, rgw rss ${(await rgw.serverRss() / MiB).toFixed(0)} MiB]\n  ${figures.join("\n  ")}`);
  }, 300_000);
});
