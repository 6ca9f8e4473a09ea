/**
 * A wrong password for an existing user and any password for an unknown user
 * cost the same work, so the answer's timing does not tell which names
 * exist: the same store reads that find an object (a name index entry and a
 * user record), and one full password verification against a hash with the
 * same parameters and sizes. Counted through a storage driver that records
 * its reads and a password verifier that records its calls, both passed
 * through public options around the real components; wall-clock medians are
 * measured from outside by bench/sign-in.ts, not here.
 */
import { describe, expect, it } from "vitest";
import { createTokenService, generatedKeys } from "../../src/auth/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import {
  createUserService, hashPassword, memoryUserStore, storageUserStore, storeCredentialCheck, verifyPassword, type UserStore,
} from "../../src/users/index.js";

const FAST = { N: 16, r: 8, p: 1 };

/** A memory driver that records each read as `<index or record> found|missing`. */
function countingStorage(inner = memoryStorage()): { driver: StorageDriver; reads: string[] } {
  const reads: string[] = [];
  const driver = Object.create(inner) as StorageDriver;
  driver.read = async (key, range) => {
    const stream = await inner.read(key, range);
    reads.push(`${key.split("/")[1]} ${stream ? "found" : "missing"}`);
    return stream;
  };
  return { driver, reads };
}

/** The real verifier, recording the shape of every hash it is given: scheme, N, r, p, salt and key lengths. */
function countingVerifier(): { verify: (password: string, encoded: string) => Promise<boolean>; hashes: string[] } {
  const hashes: string[] = [];
  const verify = (password: string, encoded: string) => {
    const [scheme, N, r, p, salt, key] = encoded.split("$");
    hashes.push(`${scheme} N=${N} r=${r} p=${p} salt=${salt?.length} key=${key?.length}`);
    return verifyPassword(password, encoded, FAST);
  };
  return { verify, hashes };
}

/** A store that counts its name lookups. */
function countingStore(inner: UserStore): { store: UserStore; lookups: string[] } {
  const lookups: string[] = [];
  const store: UserStore = Object.create(inner);
  store.getByUsername = (name) => {
    lookups.push(name);
    return inner.getByUsername(name);
  };
  return { store, lookups };
}

async function addUsers(store: UserStore): Promise<void> {
  for (const username of ["root", "alice", "bob"]) {
    const passwordHash = await hashPassword(`${username}-Password1`, FAST);
    await store.create({ username, email: "", realname: "", comment: "", sysadmin: username === "root", passwordHash });
  }
}

const found = (reads: string[]) => reads.filter((r) => r.endsWith(" found")).sort();

describe("sign-in: a wrong password and an unknown user do the same work", () => {
  it("storeCredentialCheck on storageUserStore: the same objects read, one verification of a same-shaped hash", async () => {
    const { driver, reads } = countingStorage();
    await addUsers(storageUserStore(driver));
    const { verify, hashes } = countingVerifier();
    // A new store on the same driver: it has read nothing yet (as after a restart).
    const check = storeCredentialCheck(storageUserStore(driver), { scrypt: FAST, verifyPassword: verify });
    const work = async (username: string, password: string) => {
      reads.length = 0;
      hashes.length = 0;
      const result = await check(username, password);
      return { result, reads: [...reads], hashes: [...hashes] };
    };

    const unknownFirst = await work("nobody", "whatever-Password1");
    const wrong = await work("alice", "wrong-Password1");
    const unknown = await work("nobody", "whatever-Password1");
    const right = await work("alice", "alice-Password1");
    console.log(`known user, wrong password: reads ${JSON.stringify(wrong.reads)}, hashes ${JSON.stringify(wrong.hashes)}`);
    console.log(`unknown user:               reads ${JSON.stringify(unknown.reads)}, hashes ${JSON.stringify(unknown.hashes)}`);

    expect(wrong.result).toBeUndefined();
    expect(unknown.result).toBeUndefined();
    expect(right.result?.name).toBe("alice");
    expect(wrong.reads).toEqual(["by-name found", "by-id found"]);
    expect(right.reads).toEqual(wrong.reads);
    for (const other of [unknown, unknownFirst]) {
      // The same objects found; the one more read is the lookup of the missing name itself.
      expect(found(other.reads)).toEqual(found(wrong.reads));
      expect(other.reads).toHaveLength(wrong.reads.length + 1);
      expect(other.hashes).toEqual(wrong.hashes);
    }
    expect(wrong.hashes).toEqual(["scrypt N=16 r=8 p=1 salt=24 key=44"]);
  });

  it("storeCredentialCheck on memoryUserStore: one name lookup and one verification each", async () => {
    const { store, lookups } = countingStore(memoryUserStore());
    await addUsers(store);
    const { verify, hashes } = countingVerifier();
    const check = storeCredentialCheck(store, { scrypt: FAST, verifyPassword: verify });
    for (const [name, password] of [["bob", "nope-Password1"], ["ghost", "nope-Password1"], ["ghost", "x".repeat(300)], ["bob", "x".repeat(300)]] as const) {
      lookups.length = 0;
      hashes.length = 0;
      expect(await check(name, password)).toBeUndefined();
      expect(lookups, name).toEqual([name]);
      expect(hashes, name).toEqual(["scrypt N=16 r=8 p=1 salt=24 key=44"]);
    }
  });

  it("at the token endpoint: both 401, the same objects read, one verification each", async () => {
    const { driver, reads } = countingStorage();
    const store = storageUserStore(driver);
    await addUsers(store);
    const { verify, hashes } = countingVerifier();
    const tokens = createTokenService({
      issuer: "iss", service: "reg", keys: generatedKeys({ alg: "ES256" }),
      checkCredentials: storeCredentialCheck(store, { scrypt: FAST, verifyPassword: verify }),
    });
    const attempt = async (username: string) => {
      reads.length = 0;
      hashes.length = 0;
      const res = await tokens(new Request("http://auth.test/token?service=reg", { headers: { authorization: `Basic ${btoa(`${username}:wrong-Password1`)}` } }));
      expect(res.status).toBe(401);
      return { reads: found(reads), hashes: [...hashes] };
    };
    expect(await attempt("nobody")).toEqual(await attempt("bob"));
    expect(hashes).toHaveLength(1);
  });

  it("the management service's default Basic check: both 401, the same objects read", async () => {
    const { driver, reads } = countingStorage();
    const store = storageUserStore(driver);
    await addUsers(store);
    const service = createUserService({ store, scrypt: FAST });
    const attempt = async (username: string) => {
      reads.length = 0;
      const res = await service(new Request("http://r.test/api/users/current", { headers: { authorization: `Basic ${btoa(`${username}:wrong-Password1`)}` } }));
      expect(res.status).toBe(401);
      return found(reads);
    };
    const known = await attempt("bob");
    expect(known).toEqual(["by-id found", "by-name found"]);
    expect(await attempt("nobody")).toEqual(known);
  });
});
