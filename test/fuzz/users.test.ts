/**
 * Property-based tests of the management API (`/api/users`): random methods,
 * paths, credentials, content types and JSON-ish bodies, on a live store
 * (users get created, changed and deleted as the run goes).
 * Properties: never a 5xx, never a rejection or hang; errors are
 * `{"errors":[{code,message}]}` with the code's status; no response ever
 * holds a password hash, a salt, or a password that was sent.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/http/log.js";
import { createUserService, hashPassword, memoryUserStore, type UserStore } from "../../src/users/index.js";
import { PROPERTY_TIMEOUT, bodyArb, checkUserResponse, counter, headerValue, methodArb, params, queryValue, send, tryRequest } from "./support.js";

const FAST = { N: 16, r: 1, p: 1 };
const ROOT = "Root-pass-1";
const ALICE = "Alice-pass-1";
let store: UserStore;
let service: (r: Request) => Promise<Response>;
const logs: LogEvent[] = [];
const secrets = new Set<string>([ROOT, ALICE]);

beforeAll(async () => {
  store = memoryUserStore();
  await store.create({ username: "root", email: "root@x.test", realname: "", comment: "", sysadmin: true, passwordHash: await hashPassword(ROOT, FAST) });
  await store.create({ username: "alice", email: "alice@x.test", realname: "", comment: "", sysadmin: false, passwordHash: await hashPassword(ALICE, FAST) });
  service = createUserService({ store, scrypt: FAST, selfRegistration: true, log: (e) => void logs.push(e) });
});

afterAll(() => {
  console.log(`users fuzz: ${counter.requests} requests`);
});

async function hashes(): Promise<string[]> {
  const out: string[] = [];
  for (const u of (await store.list({})).users) {
    const parts = u.passwordHash.split("$");
    out.push(u.passwordHash, parts[4]!, parts[5]!);
  }
  return out;
}

const idArb = fc.oneof(fc.constantFrom("1", "2", "3", "0", "01", "current", "2147483647", "2147483648", "99999999999", "-1", "1.0", "%31", "1/"), fc.nat(20).map(String), queryValue);
const pathArb = fc.oneof(
  fc.constant("/api/users"),
  fc.constant("/api/users/"),
  idArb.map((id) => `/api/users/${id}`),
  fc.tuple(idArb, fc.constantFrom("password", "sysadmin", "x", "")).map(([id, s]) => `/api/users/${id}/${s}`),
  fc.string({ maxLength: 20 }).map((s) => `/api/${s}`),
  fc.constantFrom("/api", "/api/", "/api//users", "/api/users/../users", "/api/Users", "/"),
);
const queryArb = fc.array(fc.tuple(fc.constantFrom("page", "page_size", "q", "username", "email", "sort", "x"), queryValue), { maxLength: 3 }).map((p) => (p.length ? `?${new URLSearchParams(p)}` : ""));
const passwordArb = fc.oneof(fc.constantFrom(ROOT, ALICE, "New-pass-12", "short", ""), fc.string({ maxLength: 20 }), fc.nat({ max: 300 }).map((n) => "Aa1" + "x".repeat(n)));
const userBody = fc.record(
  {
    username: fc.oneof(fc.constantFrom("bob", "alice", "root", "ROOT", "b", "x".repeat(65)), fc.string({ maxLength: 12 }), fc.anything()),
    email: fc.oneof(fc.constantFrom("bob@x.test", "alice@x.test", "no-at", "@x", "a@b"), fc.string({ maxLength: 20 }), fc.anything()),
    password: fc.oneof(passwordArb, fc.anything()),
    old_password: fc.oneof(passwordArb, fc.anything()),
    new_password: fc.oneof(passwordArb, fc.anything()),
    realname: fc.oneof(fc.string({ maxLength: 20 }), fc.nat({ max: 2000 }).map((n) => "r".repeat(n)), fc.anything()),
    comment: fc.oneof(fc.string({ maxLength: 20 }), fc.anything()),
    sysadmin_flag: fc.oneof(fc.boolean(), fc.anything()),
    extra: fc.anything(),
  },
  { requiredKeys: [] },
);
const bodyGen = fc.oneof(
  { weight: 4, arbitrary: userBody.map((b) => JSON.stringify(b)) },
  { weight: 2, arbitrary: bodyArb },
  { weight: 1, arbitrary: fc.nat({ max: 40_000 }).map((n) => JSON.stringify({ comment: "c".repeat(n) })) },
);
const authArb = fc.option(
  fc.oneof(
    fc.constantFrom(["root", ROOT], ["alice", ALICE], ["alice", ROOT], ["ROOT", ROOT], ["nobody", "x"], ["root", ""]).map(([u, p]) => `Basic ${Buffer.from(`${u}:${p}`).toString("base64")}`),
    fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })).map(([u, p]) => `Basic ${Buffer.from(`${u}:${p}`).toString("base64")}`),
    fc.nat({ max: 50_000 }).map((n) => `Basic ${Buffer.from(`root:${"p".repeat(n)}`).toString("base64")}`),
    fc.string({ maxLength: 40 }).map((s) => `Basic ${s}`),
    fc.string({ maxLength: 40 }).map((s) => `Bearer ${s}`),
    headerValue,
  ),
  { nil: undefined, freq: 4 },
);
const typeArb = fc.option(fc.oneof(fc.constantFrom("application/json", "application/json; charset=utf-8", "application/merge-patch+json", "text/plain", "application/x-www-form-urlencoded"), headerValue), { nil: undefined, freq: 5 });

describe("management API fuzz", () => {
  it(
    "random requests: never 5xx, error shape and status match, no hash, salt or password in any answer",
    async () => {
      await fc.assert(
        fc.asyncProperty(methodArb, pathArb, queryArb, authArb, typeArb, bodyGen, async (method, path, query, auth, type, body) => {
          const headers: [string, string][] = [];
          if (auth !== undefined) headers.push(["authorization", auth]);
          if (type !== undefined) headers.push(["content-type", type]);
          const request = tryRequest(`http://reg.test${path}${query}`, method, headers, body);
          if (!request) return;
          const response = await send(service, request);
          const text = await checkUserResponse(response, request.method);
          const seen = text + JSON.stringify([...response.headers]);
          for (const s of [...secrets, ...(await hashes())]) {
            if (s.length >= 6 && seen.includes(s)) throw new Error(`secret ${s.slice(0, 4)}… in ${response.status} ${seen.slice(0, 200)}`);
          }
        }),
        params(),
      );
      const logText = JSON.stringify(logs);
      for (const s of [ROOT, ALICE, ...(await hashes())]) expect(logText.includes(s)).toBe(false);
      expect(logs.filter((l) => l.level === "error")).toEqual([]);
    },
    PROPERTY_TIMEOUT,
  );
});
