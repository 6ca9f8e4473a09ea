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
    expect(await check("root", "Root1234")).toEqual({ name: "root", admin: true, id: root.id });
    expect(await check("ALICE", "Alice1234")).toEqual({ name: "alice", admin: false, id: alice.id });
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

  it("spends a scrypt on unknown users as on known ones", async () => {
    const store = memoryUserStore();
    await store.create({ username: "alice", email: "", realname: "", comment: "", sysadmin: false, passwordHash: await hashPassword("Alice1234", { N: 2 ** 12, r: 8, p: 1 }) });
    const check = storeCredentialCheck(store, { scrypt: { N: 2 ** 12, r: 8, p: 1 } });
    const time = async (name: string) => {
      const start = performance.now();
      for (let i = 0; i < 3; i++) await check(name, "wrong-password");
      return performance.now() - start;
    };
    await time("alice"); // warm up
    const known = await time("alice");
    const unknown = await time("nobody");
    expect(unknown).toBeGreaterThan(known * 0.33);
    expect(unknown).toBeLessThan(known * 3);
  });
});
