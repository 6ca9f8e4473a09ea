/**
 * The user store contract: the last administrator is never lost; listing with
 * filters and paging.
 *
 * @module
 */
import { expect, it } from "vitest";
import type { UserStoreContractContext } from "./context.js";

/** Declare the test that the last administrator is never demoted or deleted. */
export function adminTests(ctx: UserStoreContractContext): void {
  const { setup, user, refused } = ctx;
  it("never loses its last administrator", async () => {
    const store = await setup();
    const root = await store.create(user("root", { sysadmin: true }));
    const bob = await store.create(user("bob"));
    expect(await store.countAdmins()).toBe(1);
    await refused(store.update(root.id, { sysadmin: false }), "last_admin");
    await refused(store.delete(root.id), "last_admin");
    expect(await store.getById(root.id)).toMatchObject({ sysadmin: true });
    await store.update(root.id, { sysadmin: true, realname: "still" }); // not a demotion
    await store.update(bob.id, { sysadmin: true });
    expect(await store.countAdmins()).toBe(2);
    await store.update(root.id, { sysadmin: false });
    await refused(store.delete(bob.id), "last_admin");
    await store.delete(root.id);
    expect(await store.countAdmins()).toBe(1);
  });
}

/** Declare the test of `list`: id order, filters, paging, the total. */
export function listTests(ctx: UserStoreContractContext): void {
  const { setup, user } = ctx;
  it("lists in id order with filters, paging and the total", async () => {
    const store = await setup();
    for (const name of ["alice", "bob", "carol", "dave", "alina"]) await store.create(user(name));
    const all = await store.list();
    expect(all.total).toBe(5);
    expect(all.users.map((u) => u.username)).toEqual(["alice", "bob", "carol", "dave", "alina"]);
    const page = await store.list({ offset: 1, limit: 2 });
    expect(page).toMatchObject({ total: 5 });
    expect(page.users.map((u) => u.username)).toEqual(["bob", "carol"]);
    expect((await store.list({ offset: 4, limit: 10 })).users.map((u) => u.username)).toEqual(["alina"]);
    expect(await store.list({ offset: 9 })).toEqual({ users: [], total: 5 });
    expect(await store.list({ limit: 0 })).toEqual({ users: [], total: 5 });
    const ali = await store.list({ username: "ALI" });
    expect(ali.users.map((u) => u.username)).toEqual(["alice", "alina"]);
    expect(ali.total).toBe(2);
    expect((await store.list({ email: "CAROL@" })).users.map((u) => u.username)).toEqual(["carol"]);
    expect((await store.list({ username: "ali", limit: 1, offset: 1 })).users.map((u) => u.username)).toEqual(["alina"]);
    expect((await store.list({ username: "zzz" })).total).toBe(0);
  });
}
