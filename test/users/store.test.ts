import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { memoryUserStore, storageUserStore } from "../../src/users/index.js";
import { describeUserStoreContract } from "../../src/testing/user-store-contract/index.js";

describeUserStoreContract("memoryUserStore", () => memoryUserStore());
describeUserStoreContract("storageUserStore on memoryStorage", () => storageUserStore(memoryStorage()));

const newUser = (username: string, sysadmin = false) => ({
  username,
  email: `${username}@example.test`,
  realname: "",
  comment: "",
  sysadmin,
  passwordHash: "h",
});

describe("storageUserStore", () => {
  it("keeps users across a re-created store on the same driver", async () => {
    const driver = memoryStorage();
    const first = storageUserStore(driver);
    const a = await first.create(newUser("alice", true));
    await first.create(newUser("bob"));
    await first.update(a.id, { realname: "Alice" });

    const second = storageUserStore(driver);
    expect(await second.getByUsername("ALICE")).toEqual({ ...a, realname: "Alice", updatedAt: expect.any(String) });
    expect((await second.list()).total).toBe(2);
    const c = await second.create(newUser("carol"));
    expect(c.id).toBe(3);
    await expect(second.create(newUser("bob"))).rejects.toMatchObject({ code: "duplicate_username" });
  });

  it("shares one lock between stores built on the same driver", async () => {
    const driver = memoryStorage();
    const results = await Promise.allSettled([storageUserStore(driver).create(newUser("x")), storageUserStore(driver).create(newUser("x"))]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });

  it("uses the documented keys, and hex for names that are not key-safe", async () => {
    const driver = memoryStorage();
    const store = storageUserStore(driver);
    await store.create({ ...newUser("alice"), email: "A+b@Example.test" });
    await store.create({ ...newUser("zoë"), email: "" });
    const keys = (await driver.list("_users")).keys;
    expect(keys).toEqual([
      "_users/by-email/a+b@example.test",
      "_users/by-id/0000000001.json",
      "_users/by-id/0000000002.json",
      "_users/by-name/X7a6fc3ab",
      "_users/by-name/alice",
      "_users/next-id",
    ]);
    expect((await store.getByUsername("ZOË"))?.id).toBe(2);
  });

  it("ignores a stale index entry left by a crash and recovers next-id", async () => {
    const driver = memoryStorage();
    const store = storageUserStore(driver);
    await store.create(newUser("alice"));
    // as if a create crashed after claiming the name, and next-id was lost
    await driver.write("_users/by-name/bob", new TextEncoder().encode("7"));
    await driver.delete("_users/next-id");
    expect(await store.getByUsername("bob")).toBeUndefined();
    const bob = await store.create(newUser("bob"));
    expect(bob.id).toBe(2);
    expect((await store.getByUsername("bob"))?.id).toBe(2);
  });

  it("loads records written before uid and credentialVersion existed: a stable uid, version 0, both kept once rewritten", async () => {
    const driver = memoryStorage();
    const text = (value: unknown) => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
    const legacy = { ...newUser("old", true), id: 1, createdAt: "2025-01-31T10:00:00.000Z", updatedAt: "2025-01-31T10:00:00.000Z" };
    await driver.write("_users/by-id/0000000001.json", text(legacy));
    await driver.write("_users/by-name/old", text("1"));
    await driver.write("_users/by-email/old@example.test", text("1"));
    await driver.write("_users/next-id", text("2"));

    const first = await storageUserStore(driver).getByUsername("old");
    expect(first).toEqual({ ...legacy, uid: expect.any(String), credentialVersion: 0 });
    expect(first!.uid.length).toBeGreaterThanOrEqual(16);
    const second = storageUserStore(driver);
    expect((await second.getById(1))?.uid).toBe(first!.uid);
    expect((await second.list()).users[0]?.uid).toBe(first!.uid);

    const updated = await second.update(1, { passwordHash: "h2" });
    expect(updated).toMatchObject({ uid: first!.uid, credentialVersion: 1 });
    const stored = JSON.parse(await new Response(await driver.read("_users/by-id/0000000001.json")).text()) as Record<string, unknown>;
    expect(stored).toMatchObject({ uid: first!.uid, credentialVersion: 1 });

    // The same id and name in another old store, created at another time, is another user.
    const elsewhere = memoryStorage();
    await elsewhere.write("_users/by-id/0000000001.json", text({ ...legacy, createdAt: "2025-02-01T00:00:00.000Z" }));
    expect((await storageUserStore(elsewhere).getById(1))?.uid).not.toBe(first!.uid);
  });

  it("treats a record with a malformed uid or credentialVersion as corrupt", async () => {
    for (const bad of [{ uid: "" }, { uid: 7 }, { credentialVersion: -1 }, { credentialVersion: 1.5 }, { credentialVersion: "1" }]) {
      const driver = memoryStorage();
      const store = storageUserStore(driver);
      const a = await store.create(newUser("alice"));
      await driver.write("_users/by-id/0000000001.json", new TextEncoder().encode(JSON.stringify({ ...a, ...bad })));
      await expect(store.getById(1), JSON.stringify(bad)).rejects.toThrow(/corrupt/);
    }
  });
});
