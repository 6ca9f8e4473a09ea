import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { bootstrapAdmin, createUserService, memoryUserStore, storageUserStore, storeCredentialCheck } from "../../src/users/index.js";
import { FAST, watchLeaks } from "./helpers.js";

const { fixture } = watchLeaks();

const newUser = (extra: Record<string, unknown> = {}) => ({ username: "newbie", email: "newbie@example.test", password: "Newbie123", ...extra });

describe("routing", () => {
  it("answers 404 for paths that are not routes or ids that are not user ids", async () => {
    const f = await fixture();
    for (const path of ["/api/user", "/api/users/abc", "/api/users/0", "/api/users/007", "/api/users/-1", "/api/users/1.0", "/api/users/2147483648", "/api/users/99999999999", "/api/users/1/other", "/api/users/1/password/x", "/api/users/current/password", "/users", "/api/users%2F1"]) {
      const a = await f.call("GET", path, { as: "root" });
      expect(a.status, path).toBe(404);
      expect(a.json.errors[0].code).toBe("NOT_FOUND");
    }
    expect((await f.call("GET", "/api/users/2147483647", { as: "root" })).status).toBe(404); // routed, no such user
    expect((await f.call("GET", "/api/users/", { as: "root" })).status).toBe(200);
    expect((await f.call("GET", `/api/users/${f.bob.id}/`, { as: "root" })).status).toBe(200);
  });

  it("answers 405 with Allow for a wrong method, before authentication", async () => {
    const f = await fixture();
    const cases: [string, string, string][] = [
      ["DELETE", "/api/users", "GET, POST"],
      ["POST", "/api/users/current", "GET"],
      ["PUT", "/api/users/current", "GET"],
      ["POST", `/api/users/${f.bob.id}`, "GET, PUT, DELETE"],
      ["GET", `/api/users/${f.bob.id}/password`, "PUT"],
      ["POST", `/api/users/${f.bob.id}/sysadmin`, "PUT"],
      ["PATCH", `/api/users/${f.bob.id}`, "GET, PUT, DELETE"],
    ];
    for (const [method, path, allow] of cases) {
      const a = await f.call(method, path);
      expect(a.status, `${method} ${path}`).toBe(405);
      expect(a.headers.get("allow")).toBe(allow);
      expect(a.json.errors[0].code).toBe("METHOD_NOT_ALLOWED");
    }
  });

  it("mounts under a configurable prefix", async () => {
    const f = await fixture({ prefix: "/admin/v1/" });
    expect((await f.call("GET", "/admin/v1/users/current", { as: "alice" })).status).toBe(200);
    expect((await f.call("GET", "/api/users/current", { as: "alice" })).status).toBe(404);
    const g = await fixture({ prefix: "" });
    expect((await g.call("GET", "/users/current", { as: "alice" })).status).toBe(200);
  });
});

describe("request bodies", () => {
  it("checks the content type, the size and the JSON", async () => {
    const f = await fixture({ selfRegistration: true });
    const post = (rawBody: string, type?: string) => f.call("POST", "/api/users", { rawBody, ...(type && { headers: { "content-type": type } }) });
    expect((await post(JSON.stringify(newUser()))).status).toBe(415);
    expect((await post(JSON.stringify(newUser()), "text/plain")).status).toBe(415);
    expect((await post("{not json", "application/json")).status).toBe(400);
    expect((await post("", "application/json")).status).toBe(400);
    expect((await post("[1]", "application/json")).status).toBe(400);
    expect((await post("null", "application/json")).status).toBe(400);
    const big = await post(JSON.stringify(newUser({ comment: "x".repeat(20_000) })), "application/json");
    expect(big.status).toBe(413);
    expect(big.json.errors[0].code).toBe("PAYLOAD_TOO_LARGE");
    expect((await post(JSON.stringify(newUser()), "application/json; charset=utf-8")).status).toBe(201);
  });
});

describe("validation", () => {
  const bad: [string, Record<string, unknown>][] = [
    ["username", { username: "a" }],
    ["username", { username: "x".repeat(65) }],
    ["username", { username: "has space" }],
    ["username", { username: "-lead" }],
    ["username", { username: "trail." }],
    ["username", { username: "a..b" }],
    ["username", { username: "a/b" }],
    ["username", { username: "zoë" }],
    ["username", { username: 42 }],
    ["username", { username: undefined }],
    ["email", { email: "no-at" }],
    ["email", { email: "a@b" }],
    ["email", { email: "a b@example.test" }],
    ["email", { email: "@example.test" }],
    ["email", { email: `${"x".repeat(65)}@example.test` }],
    ["email", { email: "" }],
    ["password", { password: "Short1" }],
    ["password", { password: "alllowercase1" }],
    ["password", { password: "ALLUPPERCASE1" }],
    ["password", { password: "NoDigitsHere" }],
    ["password", { password: "Aa1" + "x".repeat(126) }],
    ["password", { password: 12345678 }],
    ["realname", { realname: "x".repeat(256) }],
    ["realname", { realname: "line\nbreak" }],
    ["comment", { comment: "x".repeat(1025) }],
    ["sysadmin_flag", { sysadmin_flag: "yes" }],
  ];

  it.each(bad)("refuses a bad %s with 400 naming the field", async (field, extra) => {
    const f = await fixture({ selfRegistration: true });
    const a = await f.call("POST", "/api/users", { body: newUser(extra) });
    expect(a.status).toBe(400);
    expect(a.json).toEqual({ errors: [{ code: "BAD_REQUEST", message: expect.any(String), field }] });
    expect(await f.store.getByEmail("newbie@example.test")).toBeUndefined();
  });

  it("accepts names that are Distribution path components, folded to lower case", async () => {
    const f = await fixture({ selfRegistration: true });
    for (const [i, username] of ["ab", "a.b", "a_b", "a__b", "a---b", "x".repeat(64), "Mixed.Case"].entries()) {
      const a = await f.call("POST", "/api/users", { body: newUser({ username, email: `u${i}@example.test` }) });
      expect(a.status, username).toBe(201);
      expect(a.json.username).toBe(username.toLowerCase());
    }
  });

  it("takes a configurable password policy", async () => {
    const f = await fixture({ selfRegistration: true, passwordPolicy: { minLength: 4, requireUpper: false, requireDigit: false } });
    expect((await f.call("POST", "/api/users", { body: newUser({ password: "abcd" }) })).status).toBe(201);
  });

  it("validates profile updates", async () => {
    const f = await fixture();
    const put = (body: unknown) => f.call("PUT", `/api/users/${f.alice.id}`, { as: "alice", body });
    expect((await put({ email: "bad" })).status).toBe(400);
    expect((await put({ realname: 5 })).status).toBe(400);
    expect((await put({ comment: "\u0000" })).status).toBe(400);
    const ok = await put({ email: "Alice.New@example.test", realname: "Alice", comment: "hi" });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ email: "Alice.New@example.test", realname: "Alice", comment: "hi" });
    expect(Date.parse(ok.json.update_time)).toBeGreaterThanOrEqual(Date.parse(ok.json.creation_time));
  });
});

describe("duplicates", () => {
  it("answers 409 for a taken name or e-mail, case-insensitively", async () => {
    const f = await fixture({ selfRegistration: true });
    const name = await f.call("POST", "/api/users", { body: newUser({ username: "ALICE" }) });
    expect(name.status).toBe(409);
    expect(name.json.errors[0]).toMatchObject({ code: "CONFLICT", field: "username" });
    const email = await f.call("POST", "/api/users", { body: newUser({ email: "Bob@Example.TEST" }) });
    expect(email.status).toBe(409);
    expect(email.json.errors[0]).toMatchObject({ code: "CONFLICT", field: "email" });
    const put = await f.call("PUT", `/api/users/${f.alice.id}`, { as: "alice", body: { email: "BOB@example.test" } });
    expect(put.status).toBe(409);
    expect((await f.call("PUT", `/api/users/${f.alice.id}`, { as: "alice", body: { email: "ALICE@example.test" } })).status).toBe(200);
  });

  it("lets one of two concurrent registrations of a name win", async () => {
    const f = await fixture({ selfRegistration: true });
    const [a, b] = await Promise.all([
      f.call("POST", "/api/users", { body: newUser({ email: "one@example.test" }) }),
      f.call("POST", "/api/users", { body: newUser({ username: "NEWBIE", email: "two@example.test" }) }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
  });

  it("answers 404 to an administrator for an unknown user on every id route", async () => {
    const f = await fixture();
    expect((await f.call("GET", "/api/users/99", { as: "root" })).status).toBe(404);
    expect((await f.call("PUT", "/api/users/99", { as: "root", body: { realname: "x" } })).status).toBe(404);
    expect((await f.call("DELETE", "/api/users/99", { as: "root" })).status).toBe(404);
    expect((await f.call("PUT", "/api/users/99/password", { as: "root", body: { new_password: "Fresh1234" } })).status).toBe(404);
    expect((await f.call("PUT", "/api/users/99/sysadmin", { as: "root", body: { sysadmin_flag: true } })).status).toBe(404);
  });
});

describe("listing", () => {
  async function many() {
    const f = await fixture();
    for (let i = 0; i < 22; i++) {
      await f.store.create({ username: `user${String(i).padStart(2, "0")}`, email: `u${i}@${i % 2 ? "odd" : "even"}.test`, realname: "", comment: "", sysadmin: false, passwordHash: `scrypt$16$8$1$${btoa(String(i)).padEnd(24, "Q")}$${"B".repeat(43)}=` });
    }
    return f; // 25 users: root, alice, bob, user00 … user21
  }

  it("pages with X-Total-Count and Link", async () => {
    const f = await many();
    const first = await f.call("GET", "/api/users", { as: "root" });
    expect(first.json).toHaveLength(10);
    expect(first.headers.get("x-total-count")).toBe("25");
    expect(first.headers.get("link")).toBe('</api/users?page=2&page_size=10>; rel="next"');
    const middle = await f.call("GET", "/api/users?page=2&page_size=10", { as: "root" });
    expect(middle.json[0].username).toBe("user07");
    expect(middle.headers.get("link")).toBe('</api/users?page=1&page_size=10>; rel="prev", </api/users?page=3&page_size=10>; rel="next"');
    const last = await f.call("GET", "/api/users?page=3&page_size=10", { as: "root" });
    expect(last.json).toHaveLength(5);
    expect(last.headers.get("link")).toBe('</api/users?page=2&page_size=10>; rel="prev"');
    const beyond = await f.call("GET", "/api/users?page=9&page_size=10", { as: "root" });
    expect(beyond.json).toEqual([]);
    expect(beyond.headers.get("link")).toBe('</api/users?page=3&page_size=10>; rel="prev"');
    const one = await f.call("GET", "/api/users?page_size=100", { as: "root" });
    expect(one.json).toHaveLength(25);
    expect(one.headers.get("link")).toBeNull();
  });

  it("filters by username and email, keeping filters in Link", async () => {
    const f = await many();
    const a = await f.call("GET", "/api/users?username=USER1&page_size=5", { as: "root" });
    expect(a.headers.get("x-total-count")).toBe("10");
    expect(a.json.map((u: { username: string }) => u.username)).toEqual(["user10", "user11", "user12", "user13", "user14"]);
    expect(a.headers.get("link")).toBe('</api/users?username=USER1&page_size=5&page=2>; rel="next"');
    const b = await f.call("GET", "/api/users?email=%40odd.test", { as: "root" });
    expect(b.headers.get("x-total-count")).toBe("11");
  });

  it("refuses bad paging parameters", async () => {
    const f = await fixture();
    for (const q of ["page=0", "page=-1", "page=x", "page_size=0", "page_size=101", "page_size=1.5", `username=${"x".repeat(256)}`]) {
      const a = await f.call("GET", `/api/users?${q}`, { as: "root" });
      expect(a.status, q).toBe(400);
    }
  });
});

describe("storage-backed service", () => {
  it("keeps users, passwords and roles across a re-created storageUserStore on the same driver", async () => {
    const driver = memoryStorage();
    const first = createUserService({ store: storageUserStore(driver), scrypt: FAST, selfRegistration: true });
    expect(await bootstrapAdmin(storageUserStore(driver), { username: "root", password: "Root1234", scrypt: FAST })).toMatchObject({ user_id: 1, sysadmin_flag: true });
    const created = await first(new Request("http://x/api/users", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(newUser()) }));
    expect(created.status).toBe(201);

    const store = storageUserStore(driver);
    const again = createUserService({ store, scrypt: FAST });
    const basic = (u: string, p: string) => ({ authorization: `Basic ${btoa(`${u}:${p}`)}` });
    const list = await again(new Request("http://x/api/users", { headers: basic("root", "Root1234") }));
    expect((await list.json()).map((u: { username: string }) => u.username)).toEqual(["root", "newbie"]);
    expect(await storeCredentialCheck(store, { scrypt: FAST })("newbie", "Newbie123")).toMatchObject({ name: "newbie", admin: false, id: 2, credentialVersion: 0 });
  });
});

describe("bootstrapAdmin", () => {
  it("creates an administrator only in an empty store", async () => {
    const store = memoryUserStore();
    const admin = await bootstrapAdmin(store, { username: "Admin", password: "Admin1234", email: "admin@example.test", scrypt: FAST });
    expect(admin).toMatchObject({ username: "admin", sysadmin_flag: true, email: "admin@example.test" });
    expect(JSON.stringify(admin)).not.toContain("Admin1234");
    expect(await bootstrapAdmin(store, { username: "other", password: "Other1234", scrypt: FAST })).toBeUndefined();
    expect((await store.list()).total).toBe(1);
    expect(await storeCredentialCheck(store, { scrypt: FAST })("admin", "Admin1234")).toMatchObject({ admin: true });
  });

  it("refuses an invalid configuration without echoing the password", async () => {
    const store = memoryUserStore();
    await expect(bootstrapAdmin(store, { username: "x", password: "Admin1234" })).rejects.toThrow(/username/);
    const error = await bootstrapAdmin(store, { username: "admin", password: "weakpass" }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect(String(error)).not.toContain("weakpass");
    expect((await store.list()).total).toBe(0);
  });
});

describe("failures", () => {
  it("answers 500 with the common error shape when the store fails, and logs without secrets", async () => {
    const store = memoryUserStore();
    await bootstrapAdmin(store, { username: "root", password: "Root1234", scrypt: FAST });
    const logs: unknown[] = [];
    const broken = { ...store, list: async () => { throw new Error("disk on fire"); } };
    const handler = createUserService({ store: broken, scrypt: FAST, log: (e) => logs.push(e) });
    const a = await handler(new Request("http://x/api/users", { headers: { authorization: `Basic ${btoa("root:Root1234")}` } }));
    expect(a.status).toBe(500);
    expect(await a.json()).toEqual({ errors: [{ code: "INTERNAL_ERROR", message: "internal error" }] });
    expect(JSON.stringify(logs)).toContain("disk on fire");
    expect(JSON.stringify(logs)).not.toContain("Root1234");
  });
});
