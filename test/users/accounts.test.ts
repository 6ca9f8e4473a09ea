/**
 * The account functions behind `registry-kit users` (createAccount,
 * resetPassword, setAdministrator, deleteAccount, listAccounts): the API's
 * rules without the API, on a memory store.
 */
import { describe, expect, it } from "vitest";
import {
  createAccount, deleteAccount, listAccounts, memoryUserStore, resetPassword, setAdministrator, storeCredentialCheck, UserStoreError,
} from "../../src/users/index.js";
import { FAST } from "./helpers.js";

const options = { scrypt: FAST };

describe("account functions", () => {
  it("create, reset a password (old one refused, tokens' credential version moves), grant and revoke, delete", async () => {
    const store = memoryUserStore();
    const check = storeCredentialCheck(store, { scrypt: FAST });
    const admin = await createAccount(store, { username: "Root", password: "Root1234", admin: true }, options);
    expect(admin).toMatchObject({ username: "root", sysadmin_flag: true, email: "" });
    expect(admin).not.toHaveProperty("passwordHash");
    await createAccount(store, { username: "alice", password: "Alice1234", email: "alice@example.com" }, options);
    const before = await check("root", "Root1234");
    await resetPassword(store, "ROOT", "Recovered1", options);
    expect(await check("root", "Root1234")).toBeUndefined();
    const after = await check("root", "Recovered1");
    expect(after?.credentialVersion).toBeGreaterThan(before!.credentialVersion!);
    expect((await setAdministrator(store, "alice", true)).sysadmin_flag).toBe(true);
    expect((await setAdministrator(store, "root", false)).sysadmin_flag).toBe(false);
    await expect(setAdministrator(store, "alice", false)).rejects.toMatchObject({ code: "last_admin" });
    await expect(deleteAccount(store, "alice")).rejects.toMatchObject({ code: "last_admin" });
    await deleteAccount(store, "root");
    expect((await listAccounts(store)).map((u) => u.username)).toEqual(["alice"]);
  });

  it("refuses invalid input with a RangeError naming the field, never the password", async () => {
    const store = memoryUserStore();
    await expect(createAccount(store, { username: "Bad Name!", password: "Good1234" }, options)).rejects.toThrow(new RangeError("username may hold only a-z, 0-9 and the separators . _ __ - between them"));
    const weak = createAccount(store, { username: "bob", password: "secretpw" }, options);
    await expect(weak).rejects.toBeInstanceOf(RangeError);
    await expect(weak).rejects.not.toThrow(/secretpw/);
    await expect(createAccount(store, { username: "bob", password: "Good1234", email: "not-mail" }, options)).rejects.toThrow(/email is not a valid e-mail address/);
    await createAccount(store, { username: "bob", password: "Good1234" }, options);
    await expect(createAccount(store, { username: "BOB", password: "Good1234" }, options)).rejects.toBeInstanceOf(UserStoreError);
    await expect(resetPassword(store, "nobody", "Good1234", options)).rejects.toMatchObject({ code: "not_found", message: "no user named nobody" });
    await expect(resetPassword(store, "bob", "short", options)).rejects.toThrow(/password must be 8 to 128 characters/);
  });
});
