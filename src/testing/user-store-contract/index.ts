/**
 * The shared contract suite for {@link UserStore} implementations (vitest).
 * A new store is done when it passes this:
 *
 * ```ts
 * describeUserStoreContract("my store", async () => myStore());
 * ```
 *
 * `setup` must return a new, empty store for every test. Each section of the
 * suite is a module of this folder, over one `UserStoreContractContext`
 * (`context.ts`).
 *
 * @module
 */
import { describe } from "vitest";
import type { UserStore } from "../../users/store.js";
import { adminTests, listTests } from "./admins-and-list.js";
import { concurrencyTests } from "./concurrency.js";
import { userStoreContractContext, type UserStoreContractContext } from "./context.js";
import { recordTests } from "./records.js";
import { emailAndDeleteTests, updateTests } from "./updates.js";

/** Register the user store contract tests for one implementation. */
export function describeUserStoreContract(name: string, setup: () => UserStore | Promise<UserStore>): void {
  const ctx: UserStoreContractContext = userStoreContractContext(setup);
  describe(`user store contract: ${name}`, () => {
    recordTests(ctx);
    updateTests(ctx);
    emailAndDeleteTests(ctx);
    adminTests(ctx);
    listTests(ctx);
    concurrencyTests(ctx);
  });
}
