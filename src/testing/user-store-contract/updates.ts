/**
 * The user store contract: changing and deleting users: partial updates, the uid,
 * `credentialVersion`, the e-mail index, unknown ids, deletes.
 *
 * @module
 */
import { expect, it } from "vitest";
import type { UserStoreContractContext } from "./context.js";

/** Declare the tests of updates: changed fields, the uid and `credentialVersion`. */
export function updateTests(ctx: UserStoreContractContext): void {
  const { setup, user, refused } = ctx;
  it("updates only the given fields and moves updatedAt", async () => {
    const store = await setup();
    const a = await store.create(user("alice"));
    await new Promise((r) => setTimeout(r, 5));
    const next = await store.update(a.id, { realname: "Alice A.", passwordHash: "new" });
    expect(next).toMatchObject({ id: a.id, username: "alice", email: a.email, realname: "Alice A.", comment: "", passwordHash: "new", createdAt: a.createdAt });
    expect(Date.parse(next.updatedAt)).toBeGreaterThan(Date.parse(a.updatedAt));
    expect(await store.getById(a.id)).toEqual(next);
  });

  it("gives every user a uid: distinct, kept by every update, new for a re-created name and in another store", async () => {
    const store = await setup();
    const a = await store.create(user("alice", { sysadmin: true }));
    const b = await store.create(user("bob"));
    expect(typeof a.uid).toBe("string");
    expect(a.uid.length).toBeGreaterThanOrEqual(16);
    expect(b.uid).not.toBe(a.uid);
    await store.update(b.id, { passwordHash: "new", sysadmin: true, realname: "B", email: "b2@example.test", comment: "c" });
    expect((await store.getById(b.id))?.uid).toBe(b.uid);
    expect((await store.getByUsername("bob"))?.uid).toBe(b.uid);
    expect((await store.list()).users.map((u) => u.uid)).toEqual([a.uid, b.uid]);
    await store.delete(b.id);
    const again = await store.create(user("bob"));
    expect(again.uid).not.toBe(b.uid);
    // A wiped and refilled store hands out the same ids and names, never the same uids.
    const other = await (await setup()).create(user("alice", { sysadmin: true }));
    expect(other.uid).not.toBe(a.uid);
  });

  it("starts credentialVersion at 0 and raises it on every password or role change, never on profile changes", async () => {
    const store = await setup();
    const root = await store.create(user("root", { sysadmin: true }));
    const a = await store.create(user("alice"));
    expect(a.credentialVersion).toBe(0);
    let version = 0;
    const expectVersion = async (change: "same" | "raised") => {
      const now = (await store.getById(a.id))!.credentialVersion;
      if (change === "same") expect(now).toBe(version);
      else expect(now).toBeGreaterThan(version);
      version = now;
    };
    await store.update(a.id, { realname: "A", comment: "c", email: "new@example.test" });
    await expectVersion("same");
    await store.update(a.id, { passwordHash: "new" });
    await expectVersion("raised");
    await store.update(a.id, { passwordHash: "new" }); // a reset to the same hash is still a reset
    await expectVersion("raised");
    await store.update(a.id, { sysadmin: true });
    await expectVersion("raised");
    await store.update(a.id, { sysadmin: true, realname: "A2" }); // not a change of role
    await expectVersion("same");
    expect((await store.update(a.id, { sysadmin: false })).credentialVersion).toBeGreaterThan(version);
    await expectVersion("raised");
    await refused(store.update(root.id, { sysadmin: false, passwordHash: "x" }), "last_admin");
    expect((await store.getById(root.id))?.credentialVersion).toBe(root.credentialVersion);
  });
}

/** Declare the tests of e-mail changes, unknown users and deletes. */
export function emailAndDeleteTests(ctx: UserStoreContractContext): void {
  const { setup, user, refused } = ctx;
  it("moves the e-mail index with an e-mail change and refuses a taken address", async () => {
    const store = await setup();
    const a = await store.create(user("alice"));
    const b = await store.create(user("bob"));
    await refused(store.update(a.id, { email: "BOB@example.test" }), "duplicate_email");
    await store.update(a.id, { email: "ALICE@example.test" }); // own address, other case
    await store.update(a.id, { email: "new@example.test" });
    expect((await store.getByEmail("new@example.test"))?.id).toBe(a.id);
    expect(await store.getByEmail("alice@example.test")).toBeUndefined();
    await store.update(b.id, { email: "alice@example.test" }); // the old address is free again
    expect((await store.getByEmail("alice@example.test"))?.id).toBe(b.id);
    await store.update(b.id, { email: "" });
    expect(await store.getByEmail("alice@example.test")).toBeUndefined();
  });

  it("answers not_found for unknown users", async () => {
    const store = await setup();
    await refused(store.update(42, { realname: "x" }), "not_found");
    await refused(store.delete(42), "not_found");
  });

  it("deletes users and frees their name and e-mail", async () => {
    const store = await setup();
    const a = await store.create(user("alice"));
    await store.delete(a.id);
    expect(await store.getById(a.id)).toBeUndefined();
    expect(await store.getByUsername("alice")).toBeUndefined();
    expect(await store.getByEmail("alice@example.test")).toBeUndefined();
    await store.create(user("alice"));
  });
}
