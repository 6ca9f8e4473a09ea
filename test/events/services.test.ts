/**
 * The `onEvent` option of the token service, the users API and garbage
 * collection: which event each answer produces, with its actor.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createTokenService, memoryCredentials } from "../../src/auth/index.js";
import type { RegistryEvent } from "../../src/events/index.js";
import { collectGarbage } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { createUserService, hashPassword, memoryUserStore } from "../../src/users/index.js";
import { ISSUER, REALM, SERVICE, signer, type Signer } from "../auth/helpers.js";
import { FAST } from "../users/helpers.js";

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

const basic = (u: string, p: string) => `Basic ${btoa(`${u}:${p}`)}`;

describe("token service onEvent", () => {
  let key: Signer;
  beforeAll(async () => {
    key = await signer("events");
  });

  it("token.issued names the user; bad credentials give token.refused without a name", async () => {
    const events: RegistryEvent[] = [];
    const service = createTokenService({
      issuer: ISSUER, service: SERVICE, keys: key.keys, checkCredentials: memoryCredentials({ alice: { password: "alice-pw" } }), onEvent: (e) => void events.push(e),
    });
    const ok = await service(new Request(`${REALM}?service=${SERVICE}&scope=repository:a:pull`, { headers: { authorization: basic("alice", "alice-pw") } }));
    expect(ok.status).toBe(200);
    const bad = await service(new Request(`${REALM}?service=${SERVICE}`, { headers: { authorization: basic("alice", "wrong") } }));
    expect(bad.status).toBe(401);
    await until(() => events.length === 2);
    expect(events.map((e) => [e.action, e.actor.name, e.target.user])).toEqual([["token.issued", "alice", "alice"], ["token.refused", undefined, undefined]]);
    expect(JSON.stringify(events)).not.toContain("alice-pw");
    expect(JSON.stringify(events)).not.toContain("wrong");
  });
});

describe("users API onEvent", () => {
  it("create, update, password, admin flag and delete each give their event with the caller as actor; a refused change gives none", async () => {
    const store = memoryUserStore();
    await store.create({ username: "root", email: "root@example.test", realname: "", comment: "", sysadmin: true, passwordHash: await hashPassword("Root1234", FAST) });
    const events: RegistryEvent[] = [];
    const service = createUserService({ store, scrypt: FAST, onEvent: (e) => void events.push(e) });
    const call = async (method: string, path: string, body: unknown, auth = basic("root", "Root1234")) => {
      const res = await service(new Request(`http://registry.test${path}`, { method, headers: { authorization: auth, "content-type": "application/json" }, body: JSON.stringify(body) }));
      await res.arrayBuffer();
      return res.status;
    };
    expect(await call("POST", "/api/users", { username: "newbie", email: "newbie@example.test", password: "Newbie123" })).toBe(201);
    const id = (await store.getByUsername("newbie"))!.id;
    expect(await call("PUT", `/api/users/${id}`, { realname: "New Bie" })).toBeLessThan(300);
    expect(await call("PUT", `/api/users/${id}/password`, { new_password: "Fresh1234" })).toBeLessThan(300);
    expect(await call("PUT", `/api/users/${id}/sysadmin`, { sysadmin_flag: true })).toBeLessThan(300);
    expect(await call("DELETE", `/api/users/${id}`, undefined, basic("newbie", "wrong"))).toBe(401);
    expect(await call("DELETE", `/api/users/${id}`, undefined)).toBeLessThan(300);
    await until(() => events.length === 5);
    expect(events.map((e) => e.action)).toEqual(["user.created", "user.updated", "user.password_changed", "user.admin_changed", "user.deleted"]);
    expect(events.every((e) => e.actor.name === "root")).toBe(true);
    expect(events.slice(1).every((e) => e.target.user === String(id))).toBe(true);
    expect(JSON.stringify(events)).not.toMatch(/Newbie123|Fresh1234|Root1234/);
  });
});

describe("collectGarbage onEvent", () => {
  it("gc.completed carries the run's counts and no request", async () => {
    const events: RegistryEvent[] = [];
    await collectGarbage(memoryStorage(), { dryRun: true, onEvent: (e) => void events.push(e) });
    await until(() => events.length === 1);
    expect(events[0]!.action).toBe("gc.completed");
    expect(events[0]!.target.report).toEqual({ dryRun: true, tags: 0, manifests: 0, blobs: 0, uploads: 0, bytesFreed: 0 });
    expect(events[0]!.request).toBeUndefined();
  });
});

describe("createAllInOne onEvent", () => {
  it("receives the token service's and the users API's events besides the registry's", async () => {
    const { mkdtemp, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    const { createAllInOne } = await import("../../src/server/all-in-one/all-in-one.js");
    const { resolveConfig } = await import("../../src/server/config/config.js");
    const dir = await mkdtemp(path.join(tmpdir(), "rk-aio-events-"));
    const events: RegistryEvent[] = [];
    const { config } = resolveConfig({ env: { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: "Adm1nPassword" }, cwd: dir });
    const app = await createAllInOne(config, { origin: "http://registry.test", storage: memoryStorage(), onEvent: (e) => void events.push(e), scrypt: FAST });
    try {
      const auth = { authorization: basic("admin", "Adm1nPassword") };
      expect((await app.handler(new Request("http://registry.test/service/token?service=registry-kit", { headers: auth }))).status).toBe(200);
      const created = await app.handler(new Request("http://registry.test/api/users", {
        method: "POST", headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ username: "erin", email: "erin@example.test", password: "Er1nPassword" }),
      }));
      expect(created.status).toBe(201);
      await until(() => events.some((e) => e.action === "user.created"));
      expect(events.map((e) => e.action)).toEqual(expect.arrayContaining(["token.issued", "user.created"]));
      expect(events.find((e) => e.action === "user.created")?.actor.name).toBe("admin");
    } finally {
      await app.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
