/**
 * Limits per caller and per repository on open upload sessions (count and
 * bytes), and the removal of abandoned sessions: when a limit is reached and by
 * removeAbandonedUploads.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRegistry, removeAbandonedUploads, type RegistryLimits } from "../../src/registry/index.js";
import { checked, type StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { createTokenAuthorizer, signJwt } from "../../src/auth/index.js";
import { ISSUER, REALM, SERVICE, claims, signer } from "../auth/helpers.js";
import { bytes, errorCode, req, sha256, type Handler } from "./helpers.js";

afterEach(() => {
  vi.useRealTimers();
});

/** A registry whose caller is the `x-user` header (as a token authorizer's `sub` would be). */
function setup(limits: RegistryLimits): { registry: Handler; storage: StorageDriver } {
  const storage = checked(memoryStorage());
  const registry = createRegistry({
    storage,
    uploadSecret: "limits",
    limits,
    callerOf: (request) => request.headers.get("x-user") ?? undefined,
  });
  return { registry, storage };
}

const as = (user?: string): Record<string, string> => (user ? { "x-user": user } : {});

async function start(registry: Handler, name: string, user?: string): Promise<Response> {
  return registry(req("POST", `/v2/${name}/blobs/uploads/`, { headers: as(user) }));
}

async function uploadKeys(storage: StorageDriver): Promise<string[]> {
  const repos = (await storage.list("repositories")).keys.filter((k) => k.includes("/_uploads/"));
  const index = (await storage.list("uploads")).keys;
  return [...repos, ...index];
}

describe("open upload sessions: count limits", () => {
  it("per repository: the session past the limit gets 429 TOOMANYREQUESTS; cancelling one makes room", async () => {
    const { registry } = setup({ uploadsPerRepository: 3 });
    const locations: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await start(registry, "team/app");
      expect(r.status).toBe(202);
      locations.push(r.headers.get("location")!);
    }
    const refused = await start(registry, "team/app");
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { errors: { code: string; message: string }[] };
    expect(body.errors[0]!.code).toBe("TOOMANYREQUESTS");
    expect(body.errors[0]!.message).toMatch(/repository team\/app has 3 open uploads/);
    // Another repository is not affected.
    expect((await start(registry, "team/other")).status).toBe(202);
    expect((await registry(req("DELETE", locations[0]!))).status).toBe(204);
    expect((await start(registry, "team/app")).status).toBe(202);
  });

  it("per caller, across repositories; other callers and anonymous callers are not affected", async () => {
    const { registry } = setup({ uploadsPerCaller: 2 });
    expect((await start(registry, "alice/a", "alice")).status).toBe(202);
    expect((await start(registry, "alice/b", "alice")).status).toBe(202);
    const refused = await start(registry, "alice/c", "alice");
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("TOOMANYREQUESTS");
    expect((await start(registry, "bob/a", "bob")).status).toBe(202);
    for (let i = 0; i < 3; i++) expect((await start(registry, "anon/a")).status).toBe(202);
  });

  it("a committed upload frees its place, and leaves no index entry behind", async () => {
    const { registry, storage } = setup({ uploadsPerCaller: 1 });
    const data = bytes("layer");
    const r = await start(registry, "alice/a", "alice");
    const url = new URL(r.headers.get("location")!);
    url.searchParams.set("digest", sha256(data));
    expect((await registry(req("PUT", url.href, { body: data, headers: as("alice") }))).status).toBe(201);
    expect(await uploadKeys(storage)).toEqual([]);
    expect((await start(registry, "alice/a", "alice")).status).toBe(202);
  });

  it("parallel POSTs of one caller in one process never overshoot the limit", async () => {
    const { registry } = setup({ uploadsPerCaller: 5 });
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => start(registry, `alice/r${i % 4}`, "alice").then((r) => r.status)));
    expect(statuses.filter((s) => s === 202)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });

  it("at the limit, sessions nobody wrote to for the idle time are removed to make room", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { registry, storage } = setup({ uploadsPerCaller: 2, uploadIdleSeconds: 600 });
    const old = await start(registry, "alice/a", "alice");
    expect(old.status).toBe(202);
    vi.setSystemTime(Date.now() + 300_000);
    expect((await start(registry, "alice/b", "alice")).status).toBe(202);
    vi.setSystemTime(Date.now() + 400_000); // the first is 700 s idle, the second 400 s
    expect((await start(registry, "alice/c", "alice")).status).toBe(202);
    // The abandoned one is gone; the one still within the idle time is kept.
    expect((await registry(req("GET", old.headers.get("location")!))).status).toBe(404);
    expect((await uploadKeys(storage)).filter((k) => k.endsWith("/data"))).toHaveLength(2);
    expect((await start(registry, "alice/d", "alice")).status).toBe(429);
  });
});

describe("open upload sessions: byte limits", () => {
  it("a PATCH whose Content-Length would pass the caller's limit is refused with 403 DENIED before its body is read", async () => {
    const { registry } = setup({ uploadBytesPerCaller: 100 });
    const a = await start(registry, "alice/a", "alice");
    const patched = await registry(req("PATCH", a.headers.get("location")!, { body: new Uint8Array(60), headers: { ...as("alice"), "content-type": "application/octet-stream" } }));
    expect(patched.status).toBe(202);
    const b = await start(registry, "alice/b", "alice");
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulled++;
          controller.enqueue(new Uint8Array(50));
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const refused = await registry(req("PATCH", b.headers.get("location")!, { body, headers: { ...as("alice"), "content-length": "50", "content-type": "application/octet-stream" } }));
    expect(refused.status).toBe(403);
    const error = (await refused.json()) as { errors: { code: string; message: string }[] };
    expect(error.errors[0]!.code).toBe("DENIED");
    expect(error.errors[0]!.message).toMatch(/upload limit/);
    expect(pulled).toBe(0);
    // What fits is accepted, and bob has his own allowance.
    expect((await registry(req("PATCH", b.headers.get("location")!, { body: new Uint8Array(40), headers: as("alice") }))).status).toBe(202);
    const c = await start(registry, "bob/a", "bob");
    expect((await registry(req("PATCH", c.headers.get("location")!, { body: new Uint8Array(100), headers: as("bob") }))).status).toBe(202);
  });

  it("a body without Content-Length is cut at the limit: 403, and the upload keeps its size", async () => {
    const { registry } = setup({ uploadBytesPerCaller: 100 });
    const a = await start(registry, "alice/a", "alice");
    const first = await registry(req("PATCH", a.headers.get("location")!, { body: new Uint8Array(30), headers: as("alice") }));
    expect(first.status).toBe(202);
    const chunks = [new Uint8Array(40), new Uint8Array(40), new Uint8Array(40)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const refused = await registry(req("PATCH", first.headers.get("location")!, { body, headers: as("alice") }));
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("DENIED");
    const status = await registry(req("GET", first.headers.get("location")!, { headers: as("alice") }));
    expect(status.status).toBe(204);
    expect(status.headers.get("range")).toBe("0-29");
  });

  it("a monolithic POST ?digest= over the limit is refused and leaves no session behind", async () => {
    const { registry, storage } = setup({ uploadBytesPerCaller: 1000 });
    const data = new Uint8Array(2000).fill(7);
    const refused = await registry(req("POST", `/v2/alice/a/blobs/uploads/?digest=${sha256(data)}`, { body: data, headers: as("alice") }));
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("DENIED");
    expect(await uploadKeys(storage)).toEqual([]);
    expect((await storage.list("blobs")).keys).toEqual([]);
  });

  it("per repository, whoever writes", async () => {
    const { registry } = setup({ uploadBytesPerRepository: 100, uploadBytesPerCaller: Infinity });
    const a = await start(registry, "shared/x", "alice");
    expect((await registry(req("PATCH", a.headers.get("location")!, { body: new Uint8Array(80), headers: as("alice") }))).status).toBe(202);
    const b = await start(registry, "shared/x", "bob");
    expect((await registry(req("PATCH", b.headers.get("location")!, { body: new Uint8Array(30), headers: as("bob") }))).status).toBe(403);
    const c = await start(registry, "shared/y", "bob");
    expect((await registry(req("PATCH", c.headers.get("location")!, { body: new Uint8Array(30), headers: as("bob") }))).status).toBe(202);
  });

  it("refuses a limit that is not a whole number or Infinity", () => {
    expect(() => setup({ uploadsPerCaller: -1 })).toThrow(/uploadsPerCaller/);
    expect(() => setup({ uploadBytesPerCaller: 1.5 })).toThrow(/uploadBytesPerCaller/);
  });
});

describe("removeAbandonedUploads", () => {
  it("removes sessions idle past the age with their index entries, keeps active ones, and clears dangling entries", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { registry, storage } = setup({});
    const idle = await start(registry, "alice/a", "alice");
    await start(registry, "anon/b");
    vi.setSystemTime(Date.now() + 2 * 3600_000);
    const active = await start(registry, "alice/c", "alice");
    // An index entry whose session is gone (a crash between the two writes).
    await storage.write("uploads/callers/anonymous/00000000-0000-4000-8000-000000000000", bytes("gone/repo"));

    const dry = await removeAbandonedUploads(storage, { idleSeconds: 3600, dryRun: true });
    expect(dry.removed).toHaveLength(2);
    expect((await uploadKeys(storage)).filter((k) => k.endsWith("/data"))).toHaveLength(3);

    const report = await removeAbandonedUploads(storage, { idleSeconds: 3600 });
    const idleUuid = new URL(idle.headers.get("location")!).pathname.split("/").pop();
    expect(report.removed).toHaveLength(2);
    expect(report.removed).toContain(`alice/a/${idleUuid}`);
    expect(report.removed.filter((r) => r.startsWith("anon/b/"))).toHaveLength(1);
    expect(report.staleIndexEntries).toBe(1);
    expect(report.scanned).toBe(3);
    const left = await uploadKeys(storage);
    expect(left.filter((k) => k.endsWith("/data"))).toHaveLength(1);
    expect(left.filter((k) => k.startsWith("uploads/"))).toHaveLength(1);
    expect((await registry(req("GET", active.headers.get("location")!))).status).toBe(204);
    expect((await registry(req("GET", idle.headers.get("location")!))).status).toBe(404);
  });
});

describe("the caller behind createTokenAuthorizer", () => {
  it("is the token's sub by default: alice's limit does not touch bob", async () => {
    const trusted = await signer("limits");
    const sk = await trusted.keys.signingKey();
    const storage = checked(memoryStorage());
    const registry = createRegistry({
      storage,
      uploadSecret: "limits",
      limits: { uploadsPerCaller: 1 },
      authorize: createTokenAuthorizer({ realm: REALM, service: SERVICE, issuer: ISSUER, rootCertBundle: trusted.pem.certificate }),
    });
    const token = (sub: string, repo: string) =>
      signJwt(claims({ sub, access: [{ type: "repository", name: repo, actions: ["pull", "push"] }] }), sk, { x5c: false });
    const post = async (sub: string, repo: string) =>
      registry(req("POST", `/v2/${repo}/blobs/uploads/`, { headers: { authorization: `Bearer ${await token(sub, repo)}` } }));
    expect((await post("alice", "alice/a")).status).toBe(202);
    expect((await post("alice", "alice/b")).status).toBe(429);
    expect((await post("bob", "bob/a")).status).toBe(202);
    expect((await storage.list("uploads/callers")).keys).toHaveLength(2);
  });
});
