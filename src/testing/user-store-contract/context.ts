/**
 * What every section of the user store contract works with: a new store per
 * call, a user to create, and the check of a refusal.
 *
 * @module
 */
import { expect } from "vitest";
import type { NewUser, UserStore, UserStoreErrorCode } from "../../users/store.js";
import { UserStoreError } from "../../users/store.js";

/** The shared helpers of the user store contract sections. */
export interface UserStoreContractContext {
  /** A new, empty store of the implementation under test. */
  setup(): UserStore | Promise<UserStore>;
  /** A {@link NewUser} named `username` with plausible fields, changed by `extra`. */
  user(username: string, extra?: Partial<NewUser>): NewUser;
  /** Assert that `promise` rejects with a {@link UserStoreError} of `code`. */
  refused(promise: Promise<unknown>, code: UserStoreErrorCode): Promise<void>;
}

/** The context over the implementation's `setup`. */
export function userStoreContractContext(setup: () => UserStore | Promise<UserStore>): UserStoreContractContext {
  return { setup, user, refused };
}

function user(username: string, extra: Partial<NewUser> = {}): NewUser {
  return {
    username,
    email: `${username}@example.test`,
    realname: `${username} real`,
    comment: "",
    sysadmin: false,
    passwordHash: `hash-of-${username}`,
    ...extra,
  };
}

async function refused(promise: Promise<unknown>, code: UserStoreErrorCode): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(UserStoreError);
  expect((error as UserStoreError).code).toBe(code);
}
