/**
 * The shared contract suite for {@link UserStore} implementations (vitest).
 * A new store is done when it passes this:
 *
 * ```ts
 * describeUserStoreContract("my store", async () => myStore());
 * ```
 *
 * `setup` must return a new, empty store for every test.
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import type { NewUser, UserStore, UserStoreErrorCode } from "../users/store.js";
import { UserStoreError } from "../users/store.js";

/** Register the user store contract tests for one implementation. */
export function describeUserStoreContract(name: string, setup: () => UserStore | Promise<UserStore>): void {
  const user = (username: string, extra: Partial<NewUser> = {}): NewUser => ({
    username,
    email: `${username}@example.test`,
    realname: `${username} real`,
    comment: "",
    sysadmin: false,
    passwordHash: `hash-of-${username}`,
    ...extra,
  });

  async function refused(promise: Promise<unknown>, code: UserStoreErrorCode): Promise<void> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, `expected ${code}`).toBeInstanceOf(UserStoreError);
    expect((error as UserStoreError).code).toBe(code);
  }

  describe(`user store contract: ${name}`, () => {
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

    it("lets exactly one of two concurrent creates of one name win", async () => {
      const store = await setup();
      const results = await Promise.allSettled([
        store.create(user("alice", { email: "one@example.test" })),
        store.create(user("ALICE", { email: "two@example.test" })),
        store.create(user("bob", { email: "one@example.test" })),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect((await store.list()).total).toBe(1);
    });

    it("gives concurrent creates distinct ids", async () => {
      const store = await setup();
      const users = await Promise.all(Array.from({ length: 12 }, (_, i) => store.create(user(`user${i}`))));
      expect(new Set(users.map((u) => u.id)).size).toBe(12);
      expect((await store.list()).total).toBe(12);
    });

    it("keeps an administrator when two of them are demoted at once", async () => {
      const store = await setup();
      const a = await store.create(user("a", { sysadmin: true }));
      const b = await store.create(user("b", { sysadmin: true }));
      const results = await Promise.allSettled([store.update(a.id, { sysadmin: false }), store.delete(b.id)]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(await store.countAdmins()).toBe(1);
    });
  });
}
