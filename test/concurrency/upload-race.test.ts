/**
 * Racing requests on ONE upload session, over real sockets, on every driver
 * (memory, fs, and S3 on a real radosgw): the interleavings an attacker with
 * push rights can produce by holding a request body back (issue: a PUT that
 * commits while a PATCH still writes must never publish bytes that do not hash
 * to the digest).
 *
 * Each race has a small set of linearizable outcomes; the test accepts exactly
 * those, and afterwards every blob in storage hashes to its name and the
 * registry serves exactly the committed bytes.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { serve, type RunningServer } from "../../src/node/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { checked, type StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { s3Storage } from "../../src/storage/s3/index.js";
import { verifyAllBlobs } from "../fuzz/support.js";
import { freshRoot, useRadosgw } from "../storage/helpers/rgw.js";

const rgw = useRadosgw({ bucket: "upload-race" });
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const drivers: [string, () => Promise<StorageDriver>][] = [
  ["memory", async () => memoryStorage()],
  [
    "fs",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "rk-upload-race-"));
      dirs.push(dir);
      return fsStorage({ root: dir, fsync: false });
    },
  ],
  ["s3 (radosgw)", async () => s3Storage({ ...rgw.options(), rootDirectory: freshRoot("race") })],
];

const digestOf = (...parts: Uint8Array[]): string => {
  const hash = createHash("sha256");
  for (const p of parts) hash.update(p);
  return `sha256:${hash.digest("hex")}`;
};
const bytes = (text: string, times = 1): Uint8Array => new TextEncoder().encode(text.repeat(times));

interface Reply {
  status: number;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A request whose headers go out at once and whose body is sent by `finish()`. */
function held(url: string, method: string, headers: Record<string, string>): { finish: (body?: Uint8Array) => void; reply: Promise<Reply>; request: ClientRequest } {
  const request = httpRequest(url, { method, headers });
  const reply = new Promise<Reply>((resolve, reject) => {
    request.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    request.on("error", reject);
  });
  request.flushHeaders();
  return { request, reply, finish: (body) => request.end(body ? Buffer.from(body) : undefined) };
}

function send(url: string, method: string, headers: Record<string, string> = {}, body?: Uint8Array): Promise<Reply> {
  const r = held(url, method, { ...headers, "content-length": String(body?.byteLength ?? 0) });
  r.finish(body);
  return r.reply;
}

const code = (reply: Reply): string | undefined => (reply.body ? (JSON.parse(reply.body) as { errors?: { code: string }[] }).errors?.[0]?.code : undefined);
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Long enough for the server to run the held request's handler up to its body. */
const SETTLE_MS = 150;

describe.each(drivers)("one upload session raced over real sockets: %s", (_name, makeStorage) => {
  let server: RunningServer;
  let storage: StorageDriver;
  let base: string;

  beforeEach(async () => {
    storage = checked(await makeStorage());
    server = await serve(createRegistry({ storage, uploadSecret: "race-secret" }), { host: "127.0.0.1", port: 0 });
    base = server.url;
  });
  afterEach(async () => {
    await server.close();
    await storage.close?.();
  });

  async function start(repo: string): Promise<string> {
    const r = await send(`${base}/v2/${repo}/blobs/uploads/`, "POST");
    expect(r.status).toBe(202);
    return new URL(r.headers.location!, base).href;
  }
  async function patch(location: string, data: Uint8Array, offset: number): Promise<string> {
    const r = await send(location, "PATCH", { "content-type": "application/octet-stream", "content-range": `${offset}-${offset + data.byteLength - 1}` }, data);
    expect(r.status, r.body).toBe(202);
    return new URL(r.headers.location!, base).href;
  }
  const withDigest = (location: string, digest: string): string => {
    const url = new URL(location);
    url.searchParams.set("digest", digest);
    return url.href;
  };
  async function servedDigest(repo: string, digest: string): Promise<string | undefined> {
    const r = await fetch(`${base}/v2/${repo}/blobs/${digest}`);
    if (r.status !== 200) return undefined;
    return digestOf(new Uint8Array(await r.arrayBuffer()));
  }
  async function uploadsLeft(): Promise<string[]> {
    return (await storage.list("repositories")).keys.filter((k) => k.includes("/_uploads/"));
  }

  it("PUT committing while a PATCH body is held: either the PUT is refused, or the PATCH is; the blob always hashes to its name", async () => {
    const first = bytes("first chunk ", 1000);
    const late = bytes("LATE BYTES ", 1000);
    let location = await start("alice/app");
    location = await patch(location, first, 0);
    const patching = held(location, "PATCH", { "content-type": "application/octet-stream", "content-range": `${first.byteLength}-${first.byteLength + late.byteLength - 1}`, "content-length": String(late.byteLength) });
    await pause(SETTLE_MS);
    const put = await send(withDigest(location, digestOf(first)), "PUT");
    patching.finish(late);
    const patched = await patching.reply;

    if (put.status === 201) {
      // The commit took effect first: the PATCH must not have written anywhere that is served.
      expect([404, 416]).toContain(patched.status);
      expect(await servedDigest("alice/app", digestOf(first))).toBe(digestOf(first));
    } else {
      expect(put.status).toBe(416);
      expect(code(put)).toBe("RANGE_INVALID");
      expect(patched.status, patched.body).toBe(202);
      expect(await servedDigest("alice/app", digestOf(first))).toBeUndefined();
      // The session goes on: commit the whole of it.
      const next = new URL(patched.headers.location!, base).href;
      const done = await send(withDigest(next, digestOf(first, late)), "PUT");
      expect(done.status, done.body).toBe(201);
      expect(await servedDigest("alice/app", digestOf(first, late))).toBe(digestOf(first, late));
    }
    await pause(SETTLE_MS);
    expect(await verifyAllBlobs(storage)).toBeGreaterThanOrEqual(1);
  });

  it("the attack on a shared layer: bob's blob keeps its bytes when alice commits the same digest under a held PATCH", async () => {
    const layer = bytes("well-known base layer ", 2000);
    const bobStart = await start("bob/base");
    expect((await send(withDigest(bobStart, digestOf(layer)), "PUT", {}, layer)).status).toBe(201);
    let location = await start("alice/evil");
    location = await patch(location, layer, 0);
    const patching = held(location, "PATCH", { "content-type": "application/octet-stream", "content-length": "7" });
    await pause(SETTLE_MS);
    const put = await send(withDigest(location, digestOf(layer)), "PUT");
    patching.finish(bytes("garbage"));
    const patched = await patching.reply;
    expect([201, 416]).toContain(put.status);
    expect(put.status === 201 ? [404, 416] : [202]).toContain(patched.status);
    await pause(SETTLE_MS);
    expect(await servedDigest("bob/base", digestOf(layer))).toBe(digestOf(layer));
    expect(await verifyAllBlobs(storage)).toBe(1);
  });

  it("PATCH racing PATCH on one state: one writes, the other gets 416 and changes nothing", async () => {
    const a = bytes("A", 5000);
    const b = bytes("B", 3000);
    const location = await start("alice/pp");
    const first = held(location, "PATCH", { "content-type": "application/octet-stream", "content-length": String(a.byteLength) });
    await pause(SETTLE_MS);
    const second = await send(location, "PATCH", { "content-type": "application/octet-stream" }, b);
    first.finish(a);
    const firstReply = await first.reply;
    // Normally the held one holds the session and the other is refused; on a machine so
    // loaded that the held request had not reached storage yet, the order is the other way
    // round. Either way: exactly one writes, the other gets 416, nothing interleaves.
    const [won, lost, data] = firstReply.status === 202 ? [firstReply, second, a] : [second, firstReply, b];
    expect(lost.status, lost.body).toBe(416);
    expect(code(lost)).toBe("RANGE_INVALID");
    expect(won.status, won.body).toBe(202);
    expect(won.headers.range).toBe(`0-${data.byteLength - 1}`);
    const next = new URL(won.headers.location!, base).href;
    const status = await send(next, "GET");
    expect(status.status).toBe(204);
    expect(status.headers.range).toBe(`0-${data.byteLength - 1}`);
    const done = await send(withDigest(next, digestOf(data)), "PUT");
    expect(done.status, done.body).toBe(201);
  });

  it("PATCH racing DELETE: after both, the session is gone and nothing was published or left behind", async () => {
    const data = bytes("cancel me ", 500);
    const location = await start("alice/pd");
    const patching = held(location, "PATCH", { "content-type": "application/octet-stream", "content-length": String(data.byteLength) });
    await pause(SETTLE_MS);
    const cancelled = await send(location, "DELETE");
    patching.finish(data);
    const patched = await patching.reply;
    expect([204, 416]).toContain(cancelled.status);
    if (cancelled.status === 204) {
      expect([202, 404, 416]).toContain(patched.status);
      const next = patched.status === 202 ? new URL(patched.headers.location!, base).href : location;
      const status = await send(next, "GET");
      expect(status.status).toBe(404);
      expect(code(status)).toBe("BLOB_UPLOAD_UNKNOWN");
      await pause(SETTLE_MS);
      expect(await uploadsLeft()).toEqual([]);
    } else {
      expect(patched.status).toBe(202);
    }
    expect(await servedDigest("alice/pd", digestOf(data))).toBeUndefined();
  });

  it("PUT racing PUT: exactly one commits, the other is refused; the blob hashes to its name", async () => {
    const data = bytes("twice ", 4000);
    let location = await start("alice/tt");
    location = await patch(location, data, 0);
    const [p1, p2] = await Promise.all([send(withDigest(location, digestOf(data)), "PUT"), send(withDigest(location, digestOf(data)), "PUT")]);
    const statuses = [p1.status, p2.status].sort();
    expect(statuses[0]).toBe(201);
    expect([404, 416]).toContain(statuses[1]);
    expect(await servedDigest("alice/tt", digestOf(data))).toBe(digestOf(data));
    await pause(SETTLE_MS);
    expect(await uploadsLeft()).toEqual([]);
  });

  it("PUT with a held final chunk racing a PUT without one: the one that commits publishes exactly what it hashed", async () => {
    const head = bytes("head ", 1000);
    const tail = bytes("tail ", 1000);
    let location = await start("alice/pt");
    location = await patch(location, head, 0);
    const withTail = held(withDigest(location, digestOf(head, tail)), "PUT", { "content-type": "application/octet-stream", "content-length": String(tail.byteLength) });
    await pause(SETTLE_MS);
    const bare = await send(withDigest(location, digestOf(head)), "PUT");
    withTail.finish(tail);
    const tailed = await withTail.reply;
    expect([bare.status, tailed.status].filter((s) => s === 201)).toHaveLength(1);
    if (bare.status === 201) expect(await servedDigest("alice/pt", digestOf(head))).toBe(digestOf(head));
    if (tailed.status === 201) expect(await servedDigest("alice/pt", digestOf(head, tail))).toBe(digestOf(head, tail));
    await pause(SETTLE_MS);
    expect(await verifyAllBlobs(storage)).toBe(1);
  });
});
