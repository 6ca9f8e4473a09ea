/**
 * The user store contract: creating and finding users: ids, every field kept, case-
 * insensitive names and e-mails, copies handed out, duplicates refused, ids never
 * reused.
 *
 * @module
 */
import { expect, it } from "vitest";
import type { UserStoreContractContext } from "./context.js";

/** Declare the tests of creating and finding users. */
export function recordTests(ctx: UserStoreContractContext): void {
  const { setup, user, refused } = ctx;
  it("creates users with increasing positive ids and keeps every field", async () => {
    const store = await setup();
    const a = await store.create(user("alice", { comment: "c", sysadmin: true }));
    const b = await store.create(user("bob"));
    expect(a.id).toBeGreaterThan(0);
    expect(b.id).toBeGreaterThan(a.id);
    expect(a).toMatchObject({ username: "alice", email: "alice@example.test", realname: "alice real", comment: "c", sysadmin: true, passwordHash: "hash-of-alice" });
    expect(Date.parse(a.createdAt)).not.toBeNaN();
    expect(a.updatedAt).toBe(a.createdAt);
    expect(await store.getById(a.id)).toEqual(a);
  });

  it("finds users by name and e-mail case-insensitively", async () => {
    const store = await setup();
    const a = await store.create(user("Alice.Smith", { email: "Alice@Example.TEST" }));
    expect((await store.getByUsername("alice.smith"))?.id).toBe(a.id);
    expect((await store.getByUsername("ALICE.SMITH"))?.username).toBe("Alice.Smith");
    expect((await store.getByEmail("alice@example.test"))?.id).toBe(a.id);
    expect(await store.getByUsername("alice")).toBeUndefined();
    expect(await store.getByEmail("")).toBeUndefined();
  });

  it("answers undefined for ids that are not users", async () => {
    const store = await setup();
    await store.create(user("alice"));
    for (const id of [0, -1, 1.5, 999, 2 ** 31, Number.NaN]) expect(await store.getById(id)).toBeUndefined();
  });

  it("hands out copies: changing a returned record changes nothing stored", async () => {
    const store = await setup();
    const a = await store.create(user("alice"));
    a.sysadmin = true;
    const again = await store.getById(a.id);
    if (again) again.passwordHash = "x";
    expect(await store.getById(a.id)).toMatchObject({ sysadmin: false, passwordHash: "hash-of-alice" });
  });

  it("refuses duplicate names and e-mails case-insensitively, but not empty e-mails", async () => {
    const store = await setup();
    await store.create(user("alice", { email: "a@example.test" }));
    await refused(store.create(user("ALICE", { email: "other@example.test" })), "duplicate_username");
    await refused(store.create(user("alice2", { email: "A@EXAMPLE.test" })), "duplicate_email");
    await store.create(user("carol", { email: "" }));
    await store.create(user("dave", { email: "" }));
    expect((await store.list()).total).toBe(3);
  });

  it("never reuses an id, even after a delete", async () => {
    const store = await setup();
    const a = await store.create(user("alice"));
    const b = await store.create(user("bob"));
    await store.delete(b.id);
    const c = await store.create(user("bob"));
    expect(c.id).toBeGreaterThan(b.id);
    expect(c.id).toBeGreaterThan(a.id);
  });
}
