/**
 * The user store contract: concurrent creates, demotions and deletes: one winner for
 * a name, distinct ids, an administrator kept.
 *
 * @module
 */
import { expect, it } from "vitest";
import type { UserStoreContractContext } from "./context.js";

/** Declare the tests of concurrent creates, demotions and deletes. */
export function concurrencyTests(ctx: UserStoreContractContext): void {
  const { setup, user } = ctx;
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
}
