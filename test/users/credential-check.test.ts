import { describe, expect, it } from "vitest";
import { hashPassword, memoryUserStore, storeCredentialCheck } from "../../src/users/index.js";

const FAST = { N: 16, r: 8, p: 1 };

async function setup() {
  const store = memoryUserStore();
  const root = await store.create({ username: "root", email: "", realname: "", comment: "", sysadmin: true, passwordHash: await hashPassword("Root1234", FAST) });
  const alice = await store.create({ username: "alice", email: "", realname: "", comment: "", sysadmin: false, passwordHash: await hashPassword("Alice1234", FAST) });
  return { store, root, alice, check: storeCredentialCheck(store, { scrypt: FAST }) };
}

describe("storeCredentialCheck", () => {
  it("maps users to principals; administrators become admin", async () => {
    const { check, root, alice } = await setup();
    expect(await check("root", "Root1234")).toEqual({ name: "root", admin: true, id: root.id, uid: root.uid, credentialVersion: 0 });
    expect(await check("ALICE", "Alice1234")).toEqual({ name: "alice", admin: false, id: alice.id, uid: alice.uid, credentialVersion: 0 });
  });

  it("refuses wrong passwords and unknown users without throwing", async () => {
    const { check } = await setup();
    expect(await check("alice", "alice1234")).toBeUndefined();
    expect(await check("nobody", "Alice1234")).toBeUndefined();
    expect(await check("", "")).toBeUndefined();
    expect(await check("x".repeat(300), "y".repeat(300))).toBeUndefined();
  });

  it("applies role changes, password changes and deletion on the next call (no cache)", async () => {
    const { store, check, root, alice } = await setup();
    await store.update(alice.id, { sysadmin: true });
    expect((await check("alice", "Alice1234"))?.admin).toBe(true);
    await store.update(root.id, { sysadmin: false });
    expect((await check("root", "Root1234"))?.admin).toBe(false);
    await store.update(alice.id, { passwordHash: await hashPassword("Changed123", FAST) });
    expect(await check("alice", "Alice1234")).toBeUndefined();
    expect(await check("alice", "Changed123")).toBeDefined();
    await store.delete(root.id);
    expect(await check("root", "Root1234")).toBeUndefined();
  });
});

describe("storeCredentialCheck with the token service: refresh tokens follow the store", () => {
  it("issues a refresh token, honours it while the user exists, refuses it once the user is deleted", async () => {
    const { createTokenService, generatedKeys } = await import("../../src/auth/index.js");
    const { store, check, alice } = await setup();
    expect(await check.lookupUser("ALICE")).toEqual({ name: "alice", admin: false, id: alice.id, uid: alice.uid, credentialVersion: 0 });
    expect(await check.lookupUser("nobody")).toBeUndefined();
    const service = createTokenService({ issuer: "iss", service: "reg", keys: generatedKeys({ alg: "ES256" }), checkCredentials: check });
    const form = (fields: Record<string, string>) =>
      service(new Request("http://auth.test/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) }));

    const first = await form({ grant_type: "password", username: "alice", password: "Alice1234", service: "reg", client_id: "t", access_type: "offline", scope: "repository:alice/app:pull" });
    expect(first.status).toBe(200);
    const { refresh_token } = (await first.json()) as { refresh_token?: string };
    expect(typeof refresh_token).toBe("string");

    const again = await form({ grant_type: "refresh_token", refresh_token: refresh_token!, service: "reg", client_id: "t", scope: "repository:alice/app:pull" });
    expect(again.status).toBe(200);

    await store.delete(alice.id);
    const refused = await form({ grant_type: "refresh_token", refresh_token: refresh_token!, service: "reg", client_id: "t", scope: "repository:alice/app:pull" });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_grant");
  });
});
