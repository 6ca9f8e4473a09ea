/**
 * A full disk, for real: a tmpfs of a few MiB (helpers/small-fs.ts) filled by a
 * filler file until the kernel answers ENOSPC, then given back exactly the
 * bytes a case needs. The fs driver must report `no_space` and leave nothing
 * behind (free space is compared before and after, to the byte); the registry
 * must answer 507 with the OCI error body and keep serving reads; the
 * management API answers 507 in its own error shape; the token service, which
 * never writes, keeps issuing tokens.
 *
 * Needs root (mount). Without it every test here fails with the reason.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, statfs } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTokenService, generatedKeys } from "../../src/auth/index.js";
import type { LogEvent } from "../../src/http/log.js";
import { serve } from "../../src/node/index.js";
import { createRegistry, type RegistryHandler } from "../../src/registry/index.js";
import { StorageError, checked, type StorageDriver } from "../../src/storage/driver.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { createUserService, hashPassword, storageUserStore, storeCredentialCheck, type UserStore } from "../../src/users/index.js";
import { bytes, imageManifest, pushBlob, pushImage, req, sha256 } from "../registry/helpers.js";
import { useSmallFilesystem } from "./helpers/small-fs.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const PAGE = 4096;

const disk = useSmallFilesystem({ bytes: 4 * MiB });

let root: string;
let raw: StorageDriver;

beforeEach(async () => {
  root = await mkdtemp(path.join(disk.dir, "root-"));
  raw = fsStorage({ root });
  // The driver writes its lock holder file (writer-lock.ts) at its first lock: take one
  // now, so that the free space a test compares is that test's own.
  await raw.append("warm/data", new Uint8Array(1));
  await raw.delete("warm/data");
});

afterEach(async () => {
  await raw.close?.();
  await disk.release();
  await rm(root, { recursive: true, force: true });
});

/** Every file and directory under `dir`, relative, `/`-separated, directories ending in `/`. */
async function entries(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const rel = path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/");
    out.push(entry.isDirectory() ? rel + "/" : rel);
  }
  return out.sort();
}

/** What the driver's temp directory holds (in-flight writes, lock temps). */
const temps = () => readdir(path.join(root, "~tmp"));

/** Read a stream whole. */
async function readBytes(stream: ReadableStream<Uint8Array> | undefined): Promise<string> {
  if (!stream) return "<no object>";
  return bytesOf(Buffer.from(await new Response(stream).arrayBuffer()));
}

/** Bytes compared as hex digests plus length: vitest's deep equality walks a 1 MiB array for seconds. */
function bytesOf(data: Uint8Array): string {
  return `${data.byteLength} bytes, sha256 ${createHash("sha256").update(data).digest("hex")}`;
}

async function noSpace(promise: Promise<unknown>): Promise<StorageError> {
  const error = await promise.then(
    () => {
      throw new Error("expected the operation to fail with no_space");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageError);
  const storageError = error as StorageError;
  expect(storageError.code).toBe("no_space");
  // The message names no path (the cause keeps it, for logs).
  expect(storageError.message).not.toContain(disk.dir);
  return storageError;
}

describe("fs driver on a full disk", () => {
  let store: StorageDriver;
  beforeEach(() => {
    store = checked(raw);
  });

  it("a write larger than the free space fails with no_space, keeps the old object and leaves no temp file", async () => {
    const old = randomBytes(10 * KiB);
    await store.write("a/obj", old);
    await disk.fill(64 * KiB);
    const free = await disk.freeBytes();

    const error = await noSpace(store.write("a/obj", randomBytes(1 * MiB)));
    expect((error.cause as { code?: string }).code).toBe("ENOSPC");

    expect(await readBytes(await store.read("a/obj"))).toBe(bytesOf(old));
    expect(await temps()).toEqual([]);
    expect(await disk.freeBytes()).toBe(free);
  });

  it("a streamed write to a new key fails with no_space and leaves no object, no directory, no temp file", async () => {
    await disk.fill(64 * KiB);
    const free = await disk.freeBytes();
    const body = new Blob([randomBytes(512 * KiB), randomBytes(512 * KiB)]).stream();
    await noSpace(store.write("new/deep/obj", body));
    expect(await store.stat("new/deep/obj")).toBeUndefined();
    expect((await entries(root)).filter((e) => !e.startsWith("~writers/"))).toEqual(["~tmp/"]);
    expect(await disk.freeBytes()).toBe(free);
  });

  it("an append that meets a full disk is cut back to the size before it, and continues once space is freed", async () => {
    const first = randomBytes(40 * KiB);
    expect(await store.append("up/data", first, { expectedSize: 0 })).toBe(first.byteLength);
    await disk.fill(64 * KiB);
    const free = await disk.freeBytes();

    const second = randomBytes(512 * KiB);
    await noSpace(store.append("up/data", second, { expectedSize: first.byteLength, create: false }));

    // The bytes that did fit were truncated away: same size, same bytes, same free space.
    expect((await store.stat("up/data"))?.size).toBe(first.byteLength);
    expect(await readBytes(await store.read("up/data"))).toBe(bytesOf(first));
    expect(await disk.freeBytes()).toBe(free);
    expect(await temps()).toEqual([]);
    expect(await entries(path.join(root, "up"))).toEqual(["data"]); // no writer lock left

    await disk.release();
    expect(await store.append("up/data", second, { expectedSize: first.byteLength, create: false })).toBe(first.byteLength + second.byteLength);
    expect(await readBytes(await store.read("up/data"))).toBe(bytesOf(Buffer.concat([first, second])));
  });

  it("an append that would create the object and fails leaves no object", async () => {
    await disk.fill(64 * KiB);
    const free = await disk.freeBytes();
    await noSpace(store.append("fresh/data", randomBytes(512 * KiB), { expectedSize: 0 }));
    expect(await store.stat("fresh/data")).toBeUndefined();
    expect((await store.list("fresh")).keys).toEqual([]);
    expect(await temps()).toEqual([]);
    expect(await disk.freeBytes()).toBe(free);
  });

  it("with no byte free, an append fails with no_space and changes nothing; a move, which needs no new space, still publishes", async () => {
    const data = randomBytes(8 * KiB);
    await store.append("up/data", data, { expectedSize: 0 });
    await disk.fill(0);

    await noSpace(store.append("up/data", randomBytes(KiB), { expectedSize: data.byteLength, create: false }));
    expect((await store.stat("up/data"))?.size).toBe(data.byteLength);
    expect(await temps()).toEqual([]);
    expect(await entries(path.join(root, "up"))).toEqual(["data"]); // no writer lock left
    expect(await disk.freeBytes()).toBe(0);

    // The writer lock is a hard link to the process's holder file: no new block.
    await store.move("up/data", "done/data", { expectedSize: data.byteLength });
    expect(await readBytes(await store.read("done/data"))).toBe(bytesOf(data));
    expect(await store.stat("up/data")).toBeUndefined();
    await disk.release();
  });

  it("a file-size limit (EFBIG, RLIMIT_FSIZE set with prlimit) is no_space too, and leaves no temp file", async () => {
    // Node ignores SIGXFSZ, so the kernel's EFBIG reaches the driver. The limit is on this
    // worker process only, and only for the few milliseconds of the write.
    const setLimit = (value: string) => execFileSync("prlimit", ["--pid", String(process.pid), `--fsize=${value}`]);
    const before = execFileSync("prlimit", ["--pid", String(process.pid), "--fsize", "--raw", "--noheadings", "--output=SOFT,HARD"]).toString().trim().split(/\s+/);
    setLimit(`${256 * KiB}:${before[1]}`);
    let error: StorageError;
    try {
      error = await noSpace(store.write("big", randomBytes(1 * MiB)));
    } finally {
      setLimit(`${before[0]}:${before[1]}`);
    }
    expect((error.cause as { code?: string }).code).toBe("EFBIG");
    expect(await store.stat("big")).toBeUndefined();
    expect(await temps()).toEqual([]);
  });
});

describe("registry on a full disk", () => {
  const NAME = "test/app";
  let registry: RegistryHandler;
  let logs: LogEvent[];

  beforeEach(() => {
    logs = [];
    registry = createRegistry({ storage: raw, uploadSecret: "full-disk-secret", log: (event) => void logs.push(event) });
  });

  /** The 507 answer, with its OCI error body; the message names no path and no errno. */
  async function expectStorageFull(response: Response): Promise<void> {
    const text = await response.text();
    expect(response.status, text).toBe(507);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(JSON.parse(text)).toEqual({
      errors: [{ code: "UNKNOWN", message: expect.stringContaining("the registry's storage is full"), detail: null }],
    });
    expect(text).not.toContain(disk.dir);
    expect(text).not.toMatch(/ENOSPC|EDQUOT|EFBIG|~tmp/);
  }

  function expectFullLogged(): void {
    const event = logs.find((e) => e.msg === "registry storage is full");
    expect(event, JSON.stringify(logs)).toBeDefined();
    expect(event!.level).toBe("error");
    const error = event!.error as StorageError;
    expect(error.code).toBe("no_space");
    expect((error.cause as { code?: string }).code).toBe("ENOSPC");
  }

  /** Every file (not directory) under the registry's root, `~tmp` included; not the lock holder files of `~writers`. */
  async function files(): Promise<string[]> {
    return (await entries(root)).filter((e) => !e.endsWith("/") && !e.startsWith("~writers/"));
  }

  it("a monolithic push (POST ?digest=) bigger than the free space answers 507 and leaves no temp file, no upload, no blob", async () => {
    const blob = randomBytes(1 * MiB);
    const digest = sha256(blob);
    await disk.fill(256 * KiB);
    const free = await disk.freeBytes();

    const response = await registry(req("POST", `/v2/${NAME}/blobs/uploads/?digest=${digest}`, { body: blob }));
    await expectStorageFull(response);
    expectFullLogged();

    expect(await files()).toEqual([]);
    expect((await entries(root)).filter((e) => e.includes("_uploads/") || e.startsWith("blobs/"))).toEqual([]);
    expect(await disk.freeBytes()).toBe(free);
    expect((await registry(req("HEAD", `/v2/${NAME}/blobs/${digest}`))).status).toBe(404);

    // Space back: the same push succeeds.
    await disk.release();
    const retry = await registry(req("POST", `/v2/${NAME}/blobs/uploads/?digest=${digest}`, { body: blob }));
    expect(retry.status, await retry.text()).toBe(201);
  });

  it("over HTTP, the client gets the 507 and its body while the rest of its upload is discarded", async () => {
    const server = await serve(registry);
    try {
      const blob = randomBytes(2 * MiB);
      await disk.fill(128 * KiB);
      const free = await disk.freeBytes();
      const response = await fetch(`${server.url}/v2/${NAME}/blobs/uploads/?digest=${sha256(blob)}`, { method: "POST", body: blob });
      await expectStorageFull(response);
      expect(await files()).toEqual([]);
      expect(await disk.freeBytes()).toBe(free);
      // The connection (or a new one) still serves.
      expect((await fetch(`${server.url}/v2/`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("a PATCH that meets a full disk answers 507, the upload keeps its size, and it continues and commits once space is freed", async () => {
    const first = randomBytes(64 * KiB);
    const second = randomBytes(256 * KiB);
    const start = await registry(req("POST", `/v2/${NAME}/blobs/uploads/`));
    expect(start.status).toBe(202);
    const patch = (location: string, chunk: Uint8Array, from: number) =>
      registry(req("PATCH", location, { body: chunk as Uint8Array<ArrayBuffer>, headers: { "content-type": "application/octet-stream", "content-range": `${from}-${from + chunk.byteLength - 1}` } }));
    const one = await patch(start.headers.get("location")!, first, 0);
    expect(one.status).toBe(202);
    const location = one.headers.get("location")!;
    const status = async () => {
      const r = await registry(req("GET", location));
      expect(r.status).toBe(204);
      return r.headers.get("range");
    };
    expect(await status()).toBe(`0-${first.byteLength - 1}`);

    // No byte free: the PATCH fails taking the upload's writer lock.
    await disk.fill(0);
    await expectStorageFull(await patch(location, second, first.byteLength));
    expect(await status()).toBe(`0-${first.byteLength - 1}`);
    await disk.release();

    // 32 KiB free: the PATCH writes what fits, meets ENOSPC, and the driver cuts the upload back.
    await disk.fill(32 * KiB);
    const free = await disk.freeBytes();
    await expectStorageFull(await patch(location, second, first.byteLength));
    expectFullLogged();
    expect(await status()).toBe(`0-${first.byteLength - 1}`);
    expect(await disk.freeBytes()).toBe(free);
    expect(await temps()).toEqual([]);
    const uploads = (await files()).filter((f) => f.includes("/_uploads/"));
    expect(uploads).toHaveLength(1); // the upload's data, no lock left beside it
    expect(uploads[0]).toMatch(/\/data$/);

    // Space freed: the same chunk from the same Location goes through, and the blob commits whole.
    await disk.release();
    const two = await patch(location, second, first.byteLength);
    expect(two.status, await two.clone().text()).toBe(202);
    expect(two.headers.get("range")).toBe(`0-${first.byteLength + second.byteLength - 1}`);
    const whole = Buffer.concat([first, second]);
    const digest = sha256(whole);
    const finish = new URL(two.headers.get("location")!);
    finish.searchParams.set("digest", digest);
    const put = await registry(req("PUT", finish.href));
    expect(put.status, await put.clone().text()).toBe(201);
    const got = Buffer.from(await (await registry(req("GET", `/v2/${NAME}/blobs/${digest}`))).arrayBuffer());
    expect(got.byteLength).toBe(whole.byteLength);
    expect("sha256:" + createHash("sha256").update(got).digest("hex")).toBe(digest);
  });

  it("a manifest PUT or a tag write on a full disk answers 507 and the old tag stays; reads keep being served", async () => {
    const v1 = await pushImage(registry, NAME, "v1", "one");
    // The second image's blobs go in while there is room; only its manifest meets the full disk.
    const configText = JSON.stringify({ architecture: "amd64", os: "linux", seed: "two" });
    const config = await pushBlob(registry, NAME, configText);
    const manifest2 = imageManifest(config, bytes(configText).byteLength, [{ digest: v1.layer, size: bytes("layer-bytes-one").byteLength }]);
    const putV1 = () => registry(req("PUT", `/v2/${NAME}/manifests/v1`, { body: manifest2, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    const tagOf = async (tag: string) => {
      const r = await registry(req("GET", `/v2/${NAME}/manifests/${tag}`, { headers: { accept: "application/vnd.oci.image.manifest.v1+json" } }));
      expect(r.status).toBe(200);
      return { digest: r.headers.get("docker-content-digest"), body: await r.text() };
    };

    // No byte free: the manifest's bytes cannot be written.
    await disk.fill(0);
    await expectStorageFull(await putV1());
    expect(await tagOf("v1")).toEqual({ digest: v1.digest, body: v1.manifest });
    expect((await registry(req("HEAD", `/v2/${NAME}/manifests/${sha256(manifest2)}`))).status).toBe(404);
    expect(await temps()).toEqual([]);

    // Reads need no space: the base, the catalog, the tag list, manifests and blobs are served.
    expect((await registry(req("GET", "/v2/"))).status).toBe(200);
    expect(await (await registry(req("GET", "/v2/_catalog"))).json()).toEqual({ repositories: [NAME] });
    expect(await (await registry(req("GET", `/v2/${NAME}/tags/list`))).json()).toEqual({ name: NAME, tags: ["v1"] });
    expect(await (await registry(req("GET", `/v2/${NAME}/blobs/${v1.layer}`))).text()).toBe("layer-bytes-one");
    expect((await registry(req("HEAD", `/v2/${NAME}/blobs/${v1.config}`))).status).toBe(200);
    await disk.release();

    // Two blocks free: the manifest's bytes and its revision fit, the tag's new link does not.
    await disk.fill(2 * PAGE);
    await expectStorageFull(await putV1());
    expectFullLogged();
    expect(await tagOf("v1")).toEqual({ digest: v1.digest, body: v1.manifest });
    // It failed at the tag: the new manifest is whole and reachable by digest (content-addressed, harmless).
    expect((await registry(req("HEAD", `/v2/${NAME}/manifests/${sha256(manifest2)}`))).status).toBe(200);
    expect(await disk.freeBytes()).toBe(0);
    expect(await temps()).toEqual([]);
    await disk.release();

    // Space freed: the same PUT moves the tag.
    expect((await putV1()).status).toBe(201);
    expect((await tagOf("v1")).digest).toBe(sha256(manifest2));
  });
});

describe("management API and token service on a full disk", () => {
  const FAST = { N: 16, r: 8, p: 1 };
  const ADMIN = ["root", "Root1234"] as const;
  const basic = (user: string, password: string) => `Basic ${btoa(`${user}:${password}`)}`;
  let store: UserStore;
  let logs: LogEvent[];
  let users: (request: Request) => Promise<Response>;

  beforeEach(async () => {
    store = storageUserStore(raw);
    await store.create({ username: ADMIN[0], email: "", realname: "", comment: "", sysadmin: true, passwordHash: await hashPassword(ADMIN[1], FAST) });
    logs = [];
    users = createUserService({ store, scrypt: FAST, log: (event) => void logs.push(event) });
  });

  const createBob = () =>
    users(
      new Request("http://registry.test/api/users", {
        method: "POST",
        headers: { authorization: basic(...ADMIN), "content-type": "application/json" },
        body: JSON.stringify({ username: "bob", email: "bob@example.test", password: "Bob123456", realname: "", comment: "" }),
      }),
    );

  async function expectUserStoreFull(response: Response): Promise<void> {
    const text = await response.text();
    expect(response.status, text).toBe(507);
    expect(JSON.parse(text)).toEqual({ errors: [{ code: "INSUFFICIENT_STORAGE", message: expect.stringContaining("storage is full") }] });
    expect(text).not.toContain(disk.dir);
    expect(text).not.toMatch(/ENOSPC|~tmp/);
    const event = logs.find((e) => e.msg === "user store storage is full");
    expect(event?.level).toBe("error");
  }

  it("creating a user answers 507 in the management error shape, and no user appears; after space is freed it succeeds", async () => {
    await disk.fill(0);
    await expectUserStoreFull(await createBob());
    expect(await store.getByUsername("bob")).toBeUndefined();
    await disk.release();

    // One block free: part of the create fits (the id counter, the name index), not the record.
    // The store's write order makes such a half-done create invisible, and a retry works.
    await disk.fill(PAGE);
    await expectUserStoreFull(await createBob());
    expect(await store.getByUsername("bob")).toBeUndefined();
    expect(await store.getByEmail("bob@example.test")).toBeUndefined();
    expect((await store.list()).total).toBe(1);
    // What did fit: the name index entry, stale (it names an id with no record), so ignored.
    expect(await entries(root)).toContain("_users/by-name/bob");
    expect(await temps()).toEqual([]);
    await disk.release();

    const created = await createBob();
    expect(created.status, await created.clone().text()).toBe(201);
    expect((await store.getByUsername("bob"))?.email).toBe("bob@example.test");
  });

  it("the token service never writes: it keeps issuing tokens from the user store on a full disk", async () => {
    const service = createTokenService({
      issuer: "full-disk-test",
      service: "registry.test",
      keys: generatedKeys({ alg: "ES256" }),
      checkCredentials: storeCredentialCheck(store, { scrypt: FAST }),
    });
    await disk.fill(0);
    const response = await service(
      new Request("http://registry.test/token?service=registry.test&scope=repository:test/app:pull,push", { headers: { authorization: basic(...ADMIN) } }),
    );
    expect(response.status, await response.clone().text()).toBe(200);
    expect(typeof ((await response.json()) as { token?: unknown }).token).toBe("string");
    expect(await disk.freeBytes()).toBe(0);
  });
});

describe("out of inodes (ENOSPC from mkdir)", () => {
  // A second tmpfs that runs out of inodes before bytes: there, creating a directory
  // fails with ENOSPC, after the object's bytes were written to a temp file.
  const inodeDisk = useSmallFilesystem({ bytes: 4 * MiB, inodes: 256 });
  let root2: string;
  let raw2: StorageDriver;
  beforeEach(async () => {
    root2 = await mkdtemp(path.join(inodeDisk.dir, "root-"));
    raw2 = fsStorage({ root: root2 });
  });
  afterEach(async () => {
    await raw2.close?.();
    await inodeDisk.release();
    await rm(root2, { recursive: true, force: true });
  });

  it("a write whose directories cannot all be made fails with no_space and leaves no directory and no temp file", async () => {
    const store = checked(raw2);
    await store.write("keep", bytes("kept"));
    // Two inodes: the temp file and the first directory fit, the second directory does not.
    await inodeDisk.exhaustInodes(2);
    await noSpace(store.write("a/b/c/obj", bytes("x")));
    expect(await entries(root2)).toEqual(["keep", "~tmp/"]);
    expect((await statfs(inodeDisk.dir)).ffree).toBe(2);
    await inodeDisk.release();
    await store.write("a/b/c/obj", bytes("x"));
    expect(await store.stat("a/b/c/obj")).toEqual(expect.objectContaining({ size: 1 }));
  });

  it("a manifest PUT whose directories cannot be made answers 507 and leaves the tree as it was", async () => {
    const logs: LogEvent[] = [];
    const registry = createRegistry({ storage: raw2, uploadSecret: "full-disk-secret", log: (event) => void logs.push(event) });
    const v1 = await pushImage(registry, "test/app", "v1", "one");
    const manifest2 = imageManifest(v1.config, v1.manifest.length, [], "application/vnd.oci.image.manifest.v1+json", { annotations: { n: "2" } });
    const before = await entries(root2);
    await inodeDisk.exhaustInodes(2);
    const response = await registry(req("PUT", `/v2/test/app/manifests/v2`, { body: manifest2, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(response.status, await response.clone().text()).toBe(507);
    expect(((await response.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe("UNKNOWN");
    expect(logs.some((e) => e.msg === "registry storage is full")).toBe(true);
    expect(await entries(root2)).toEqual(before);
    expect((await statfs(inodeDisk.dir)).ffree).toBe(2);
    expect((await registry(req("GET", `/v2/test/app/manifests/v1`))).status).toBe(200);
  });
});
