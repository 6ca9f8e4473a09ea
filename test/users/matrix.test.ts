/**
 * Every route × caller {anonymous, user, self, admin} × SelfRegistration
 * {on, off} × AuthMode {db, ldap}, with exact statuses.
 *
 * "user" is a non-administrator acting on another user's id (bob's),
 * "self" a non-administrator acting on their own id, "admin" an administrator
 * acting on another user's id. Routes without an id ignore the target.
 */
import { describe, expect, it } from "vitest";
import { storeCredentialCheck } from "../../src/users/index.js";
import { FAST, PASSWORDS, watchLeaks, type Answer, type Name } from "./helpers.js";

const { fixture } = watchLeaks();

type Caller = "anonymous" | "user" | "self" | "admin";
type Fixture = Awaited<ReturnType<typeof fixture>>;
interface Flags {
  selfRegistration: boolean;
  db: boolean;
}

const CALLERS: Caller[] = ["anonymous", "user", "self", "admin"];
const who: Record<Caller, Name | undefined> = { anonymous: undefined, user: "alice", self: "alice", admin: "root" };
const targetOf = (f: Fixture, caller: Caller) => (caller === "self" ? f.alice : f.bob);

interface RouteCase {
  name: string;
  method: string;
  path: (id: number) => string;
  body?: (caller: Caller) => unknown;
  expect: (flags: Flags) => Record<Caller, number>;
  /** Checks after a success. */
  success: (f: Fixture, answer: Answer, caller: Caller) => Promise<void> | void;
}

const all = (status: number): Record<Caller, number> => ({ anonymous: status, user: status, self: status, admin: status });

const ROUTES: RouteCase[] = [
  {
    name: "GET /api/users",
    method: "GET",
    path: () => "/api/users",
    expect: () => ({ anonymous: 401, user: 403, self: 403, admin: 200 }),
    success: (_f, a) => {
      expect(a.json.map((u: { username: string }) => u.username)).toEqual(["root", "alice", "bob"]);
      expect(a.headers.get("x-total-count")).toBe("3");
    },
  },
  {
    name: "POST /api/users",
    method: "POST",
    path: () => "/api/users",
    body: () => ({ username: "newbie", email: "newbie@example.test", password: "Newbie123" }),
    expect: ({ selfRegistration, db }) =>
      !db ? all(403) : selfRegistration ? all(201) : { anonymous: 401, user: 403, self: 403, admin: 201 },
    success: async (f, a) => {
      expect(a.json).toMatchObject({ username: "newbie", email: "newbie@example.test", sysadmin_flag: false });
      expect(a.headers.get("location")).toBe(`/api/users/${a.json.user_id}`);
      expect((await f.store.getByUsername("newbie"))?.id).toBe(a.json.user_id);
    },
  },
  {
    name: "GET /api/users/current",
    method: "GET",
    path: () => "/api/users/current",
    expect: () => ({ anonymous: 401, user: 200, self: 200, admin: 200 }),
    success: (_f, a, caller) => expect(a.json.username).toBe(who[caller]),
  },
  {
    name: "GET /api/users/{id}",
    method: "GET",
    path: (id) => `/api/users/${id}`,
    expect: () => ({ anonymous: 401, user: 403, self: 200, admin: 200 }),
    success: (f, a, caller) => expect(a.json.user_id).toBe(targetOf(f, caller).id),
  },
  {
    name: "PUT /api/users/{id}",
    method: "PUT",
    path: (id) => `/api/users/${id}`,
    body: () => ({ realname: "Changed Name" }),
    expect: () => ({ anonymous: 401, user: 403, self: 200, admin: 200 }),
    success: async (f, a, caller) => {
      expect(a.json).toMatchObject({ user_id: targetOf(f, caller).id, realname: "Changed Name" });
      expect((await f.store.getById(targetOf(f, caller).id))?.realname).toBe("Changed Name");
    },
  },
  {
    name: "DELETE /api/users/{id}",
    method: "DELETE",
    path: (id) => `/api/users/${id}`,
    expect: () => ({ anonymous: 401, user: 403, self: 403, admin: 204 }),
    success: async (f, a, caller) => {
      expect(a.text).toBe("");
      expect(await f.store.getById(targetOf(f, caller).id)).toBeUndefined();
    },
  },
  {
    name: "PUT /api/users/{id}/password",
    method: "PUT",
    path: (id) => `/api/users/${id}/password`,
    body: (caller) => ({ ...(caller !== "anonymous" && { old_password: PASSWORDS[who[caller]!] }), new_password: "Fresh1234" }),
    expect: ({ db }) => (db ? { anonymous: 401, user: 403, self: 204, admin: 204 } : { anonymous: 401, user: 403, self: 403, admin: 403 }),
    success: async (f, a, caller) => {
      expect(a.text).toBe("");
      const target = targetOf(f, caller).username;
      const check = storeCredentialCheck(f.store, { scrypt: FAST });
      expect(await check(target, "Fresh1234")).toBeDefined();
      expect(await check(target, PASSWORDS[target as Name])).toBeUndefined();
    },
  },
  {
    name: "PUT /api/users/{id}/sysadmin",
    method: "PUT",
    path: (id) => `/api/users/${id}/sysadmin`,
    body: () => ({ sysadmin_flag: true }),
    expect: () => ({ anonymous: 401, user: 403, self: 403, admin: 200 }),
    success: async (f, a, caller) => {
      expect(a.json).toMatchObject({ user_id: targetOf(f, caller).id, sysadmin_flag: true });
      expect((await f.store.getById(targetOf(f, caller).id))?.sysadmin).toBe(true);
    },
  },
];

const FLAGS: Flags[] = [
  { selfRegistration: true, db: true },
  { selfRegistration: false, db: true },
  { selfRegistration: true, db: false },
  { selfRegistration: false, db: false },
];

const cases = ROUTES.flatMap((route) =>
  FLAGS.flatMap((flags) =>
    CALLERS.map((caller) => ({
      route,
      flags,
      caller,
      status: route.expect(flags)[caller],
      title: `${route.name} as ${caller}, SelfRegistration ${flags.selfRegistration ? "on" : "off"}, AuthMode ${flags.db ? "db" : "ldap"}`,
    })),
  ),
);

const CODES: Record<number, string> = { 401: "UNAUTHORIZED", 403: "FORBIDDEN" };

describe("authorization matrix", () => {
  it("has every route × caller × SelfRegistration × AuthMode", () => {
    expect(cases).toHaveLength(8 * 4 * 2 * 2);
  });

  it.each(cases)("$title → $status", async ({ route, flags, caller, status }) => {
    const f = await fixture({ selfRegistration: flags.selfRegistration, authMode: flags.db ? "db" : "ldap" });
    const before = await f.raw.list();
    const name = who[caller];
    const answer = await f.call(route.method, route.path(targetOf(f, caller).id), {
      ...(name && { as: name }),
      ...(route.body && { body: route.body(caller) }),
    });
    expect(answer.status).toBe(status);
    if (status < 300) {
      await route.success(f, answer, caller);
    } else {
      expect(answer.json).toEqual({ errors: [{ code: CODES[status], message: expect.any(String) }] });
      if (status === 401) expect(answer.headers.get("www-authenticate")).toBe('Basic realm="registry-kit"');
      expect(await f.raw.list()).toEqual(before); // a refusal changes nothing
    }
  });
});
