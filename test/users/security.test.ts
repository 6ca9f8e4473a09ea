import { describe, expect, it } from "vitest";
import { anyAuthenticator, basicAuthenticator, bearerAuthenticator, storeCredentialCheck, type UserRecord } from "../../src/users/index.js";
import { FAST, PASSWORDS, watchLeaks } from "./helpers.js";

const { fixture, secrets } = watchLeaks();

describe("security properties", () => {
  it("refuses a self-registration that asks for the administrator role", async () => {
    const f = await fixture({ selfRegistration: true });
    const body = { username: "mallory", email: "m@example.test", password: "Mallory123", sysadmin_flag: true };
    const anonymous = await f.call("POST", "/api/users", { body });
    expect(anonymous.status).toBe(403);
    expect(anonymous.json.errors[0].code).toBe("FORBIDDEN");
    expect((await f.call("POST", "/api/users", { as: "alice", body })).status).toBe(403);
    expect(await f.store.getByUsername("mallory")).toBeUndefined();
    // sysadmin_flag false is what they have: fine
    expect((await f.call("POST", "/api/users", { body: { ...body, sysadmin_flag: false } })).status).toBe(201);
    // an administrator may create an administrator
    const admin = await f.call("POST", "/api/users", { as: "root", body: { ...body, username: "admin2", email: "a2@example.test" } });
    expect(admin.status).toBe(201);
    expect(admin.json.sysadmin_flag).toBe(true);
  });

  it("never lets a body's user_id or username override the path", async () => {
    const f = await fixture();
    const viaBody = await f.call("PUT", `/api/users/${f.alice.id}`, { as: "alice", body: { user_id: f.bob.id, email: "hijack@example.test" } });
    expect(viaBody.status).toBe(400);
    expect(viaBody.json.errors[0]).toMatchObject({ code: "BAD_REQUEST", field: "user_id" });
    expect((await f.store.getById(f.bob.id))?.email).toBe("bob@example.test");
    expect((await f.store.getById(f.alice.id))?.email).toBe("alice@example.test");
    const rename = await f.call("PUT", `/api/users/${f.alice.id}`, { as: "alice", body: { username: "bob" } });
    expect(rename.status).toBe(400);
    // the record sent back unchanged is accepted
    const own = (await f.call("GET", "/api/users/current", { as: "alice" })).json;
    const echo = await f.call("PUT", `/api/users/${f.alice.id}`, { as: "alice", body: { ...own, realname: "Alice" } });
    expect(echo.status).toBe(200);
    expect(echo.json).toMatchObject({ user_id: f.alice.id, username: "alice", realname: "Alice", sysadmin_flag: false });
  });

  it("refuses a non-admin PUT that asks for the administrator role, and admin role changes through PUT", async () => {
    const f = await fixture();
    const escalate = await f.call("PUT", `/api/users/${f.alice.id}`, { as: "alice", body: { realname: "x", sysadmin_flag: true } });
    expect(escalate.status).toBe(403);
    expect((await f.store.getById(f.alice.id))).toMatchObject({ sysadmin: false, realname: "" });
    const viaAdmin = await f.call("PUT", `/api/users/${f.bob.id}`, { as: "root", body: { sysadmin_flag: true } });
    expect(viaAdmin.status).toBe(400);
    expect((await f.store.getById(f.bob.id))?.sysadmin).toBe(false);
  });

  it("refuses fields outside each route's allow-list", async () => {
    const f = await fixture({ selfRegistration: true });
    const create = await f.call("POST", "/api/users", { body: { username: "eve", email: "e@example.test", password: "Evelyn123", user_id: 1 } });
    expect(create.status).toBe(400);
    expect(create.json.errors[0]).toMatchObject({ field: "user_id" });
    expect((await f.call("POST", "/api/users", { body: { username: "eve", email: "e@example.test", password: "Evelyn123", passwordHash: "x" } })).status).toBe(400);
    expect((await f.call("PUT", `/api/users/${f.alice.id}`, { as: "alice", body: { password: "Another123" } })).status).toBe(400);
    expect((await f.call("PUT", `/api/users/${f.alice.id}`, { as: "alice", rawBody: '{"__proto__":{"sysadmin":true}}', headers: { "content-type": "application/json" } })).status).toBe(400);
    expect((await f.call("PUT", `/api/users/${f.bob.id}/sysadmin`, { as: "root", body: { sysadmin_flag: true, user_id: f.alice.id } })).status).toBe(400);
    expect((await f.store.getById(f.alice.id))?.sysadmin).toBe(false);
    expect((await f.store.getById(f.bob.id))?.sysadmin).toBe(false);
  });

  it("gives a non-admin the same answer for every other id, existing or not", async () => {
    const f = await fixture();
    const ids = [f.root.id, f.bob.id, 99, 12345, 2 ** 31 - 1];
    const answers: string[] = [];
    for (const id of ids) {
      for (const [method, path, body] of [
        ["GET", `/api/users/${id}`, undefined],
        ["PUT", `/api/users/${id}`, { realname: "x" }],
        ["DELETE", `/api/users/${id}`, undefined],
        ["PUT", `/api/users/${id}/password`, { old_password: "x", new_password: "Whatever123" }],
        ["PUT", `/api/users/${id}/sysadmin`, { sysadmin_flag: false }],
      ] as const) {
        const a = await f.call(method, path, { as: "alice", ...(body && { body }) });
        answers.push(`${method} ${path.replace(String(id), "ID")} ${a.status} ${a.text}`);
      }
    }
    const perRoute = new Map<string, Set<string>>();
    for (const line of answers) {
      const key = line.split(" ").slice(0, 2).join(" ");
      perRoute.set(key, (perRoute.get(key) ?? new Set()).add(line));
    }
    for (const [route, set] of perRoute) {
      expect(set.size, route).toBe(1);
      expect([...set][0]).toContain(" 403 ");
    }
    // and an administrator does see the difference
    expect((await f.call("GET", `/api/users/${f.bob.id}`, { as: "root" })).status).toBe(200);
    expect((await f.call("GET", "/api/users/99", { as: "root" })).status).toBe(404);
  });

  it("lets a non-admin neither list nor filter users", async () => {
    const f = await fixture();
    for (const query of ["", "?username=bob", "?email=root@", "?page=2&page_size=1"]) {
      const a = await f.call("GET", `/api/users${query}`, { as: "alice" });
      expect(a.status).toBe(403);
      expect(a.headers.get("x-total-count")).toBeNull();
    }
  });

  it("needs the right old password for one's own password change", async () => {
    const f = await fixture();
    const check = storeCredentialCheck(f.store, { scrypt: FAST });
    const missing = await f.call("PUT", `/api/users/${f.alice.id}/password`, { as: "alice", body: { new_password: "Fresh1234" } });
    expect(missing.status).toBe(400);
    expect(missing.json.errors[0]).toMatchObject({ code: "BAD_REQUEST", field: "old_password" });
    const wrong = await f.call("PUT", `/api/users/${f.alice.id}/password`, { as: "alice", body: { old_password: "Wrong1234", new_password: "Fresh1234" } });
    expect(wrong.status).toBe(403);
    expect(await check("alice", PASSWORDS.alice)).toBeDefined();
    expect(await check("alice", "Fresh1234")).toBeUndefined();
    // administrators too must give their own old password
    expect((await f.call("PUT", `/api/users/${f.root.id}/password`, { as: "root", body: { new_password: "Fresh1234" } })).status).toBe(400);
    const right = await f.call("PUT", `/api/users/${f.alice.id}/password`, { as: "alice", body: { old_password: PASSWORDS.alice, new_password: "Fresh1234" } });
    expect(right.status).toBe(204);
    expect(await check("alice", "Fresh1234")).toBeDefined();
    expect((await f.call("GET", "/api/users/current", { as: "alice" })).status).toBe(401);
    expect((await f.call("GET", "/api/users/current", { as: ["alice", "Fresh1234"] })).status).toBe(200);
    // an administrator resets someone else's without it
    expect((await f.call("PUT", `/api/users/${f.bob.id}/password`, { as: "root", body: { new_password: "Reset1234" } })).status).toBe(204);
    expect(await check("bob", "Reset1234")).toBeDefined();
  });

  it("never deletes or demotes the last administrator, and administrators never delete themselves", async () => {
    const f = await fixture();
    const demote = await f.call("PUT", `/api/users/${f.root.id}/sysadmin`, { as: "root", body: { sysadmin_flag: false } });
    expect(demote.status).toBe(409);
    expect(demote.json.errors[0].code).toBe("CONFLICT");
    const self = await f.call("DELETE", `/api/users/${f.root.id}`, { as: "root" });
    expect(self.status).toBe(403);
    expect((await f.store.getById(f.root.id))?.sysadmin).toBe(true);
    // with a second administrator, one may step down; then the other is the last
    expect((await f.call("PUT", `/api/users/${f.alice.id}/sysadmin`, { as: "root", body: { sysadmin_flag: true } })).status).toBe(200);
    expect((await f.call("PUT", `/api/users/${f.root.id}/sysadmin`, { as: "root", body: { sysadmin_flag: false } })).status).toBe(200);
    expect((await f.call("PUT", `/api/users/${f.alice.id}/sysadmin`, { as: "alice", body: { sysadmin_flag: false } })).status).toBe(409);
    expect((await f.call("DELETE", `/api/users/${f.alice.id}`, { as: "alice" })).status).toBe(403);
    expect(await f.store.countAdmins()).toBe(1);
  });

  it("applies a revoked role or a deleted account on the caller's next request", async () => {
    const f = await fixture();
    await f.call("PUT", `/api/users/${f.alice.id}/sysadmin`, { as: "root", body: { sysadmin_flag: true } });
    expect((await f.call("GET", "/api/users", { as: "alice" })).status).toBe(200);
    await f.call("PUT", `/api/users/${f.alice.id}/sysadmin`, { as: "root", body: { sysadmin_flag: false } });
    expect((await f.call("GET", "/api/users", { as: "alice" })).status).toBe(403);
    await f.call("DELETE", `/api/users/${f.alice.id}`, { as: "root" });
    expect((await f.call("GET", "/api/users/current", { as: "alice" })).status).toBe(401);
  });

  it("answers 401 with the challenge to wrong, malformed or unknown-scheme credentials, even where anonymous is allowed", async () => {
    const f = await fixture({ selfRegistration: true, realm: "my realm" });
    const body = { username: "newbie", email: "n@example.test", password: "Newbie123" };
    for (const authorization of ["Basic " + btoa("alice:wrong"), "Basic !!!", "Basic " + btoa("nocolon"), "Bearer abc", "Digest x", "Basic " + btoa("ghost:Ghost1234")]) {
      const a = await f.call("POST", "/api/users", { body, headers: { authorization } });
      expect(a.status, authorization).toBe(401);
      expect(a.headers.get("www-authenticate")).toBe('Basic realm="my realm"');
    }
    expect(await f.store.getByUsername("newbie")).toBeUndefined();
  });

  it("accepts Bearer tokens bound to the store's current record, beside Basic", async () => {
    // Claims as a verifier would resolve them; `bound` is what the token service puts in a token.
    const tokens: Record<string, Record<string, unknown>> = {};
    const bound = (r: UserRecord) => ({ sub: r.username, uid: r.uid, cred_ver: r.credentialVersion });
    const verify = async (token: string) => tokens[token];
    const f = await fixture({}, (store) => anyAuthenticator(bearerAuthenticator(verify, store), basicAuthenticator(storeCredentialCheck(store, { scrypt: FAST }))));
    Object.assign(tokens, {
      "tok.root": bound(f.root),
      "tok.alice": bound(f.alice),
      "tok.ghost": { sub: "ghost", uid: f.alice.uid, cred_ver: 0 },
      "tok.anon": { sub: "" },
      "tok.unbound": { sub: "alice" },
      "tok.other-uid": { ...bound(f.alice), uid: f.bob.uid },
      "tok.other-version": { ...bound(f.alice), cred_ver: 1 },
    });
    const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });
    expect((await f.call("GET", "/api/users/current", bearer("tok.alice"))).json.username).toBe("alice");
    expect((await f.call("GET", "/api/users", bearer("tok.root"))).status).toBe(200);
    expect((await f.call("GET", "/api/users", bearer("tok.alice"))).status).toBe(403);
    for (const t of ["tok.ghost", "tok.anon", "tok.unbound", "tok.other-uid", "tok.other-version", "forged"]) {
      expect((await f.call("GET", "/api/users/current", bearer(t))).status, t).toBe(401);
    }
    expect((await f.call("GET", "/api/users/current", { as: "bob" })).json.username).toBe("bob");
    // a role change refuses the tokens issued before; one issued after carries the new role
    await f.store.update(f.alice.id, { sysadmin: true });
    expect((await f.call("GET", "/api/users/current", bearer("tok.alice"))).status).toBe(401);
    tokens["tok.alice.admin"] = bound((await f.store.getById(f.alice.id))!);
    expect((await f.call("GET", "/api/users", bearer("tok.alice.admin"))).status).toBe(200);
    await f.store.delete(f.alice.id);
    expect((await f.call("GET", "/api/users/current", bearer("tok.alice.admin"))).status).toBe(401);
  });

  it("never puts a password, hash or salt in a response or a log line (checked over every test of this file)", async () => {
    const f = await fixture({ selfRegistration: true });
    secrets.add("Newbie123");
    await f.call("POST", "/api/users", { body: { username: "newbie", email: "n@example.test", password: "Newbie123" } });
    await f.call("POST", "/api/users", { body: { username: "newbie", email: "n@example.test", password: "Newbie123" } });
    const list = await f.call("GET", "/api/users?page_size=100", { as: "root" });
    for (const user of list.json) expect(Object.keys(user).sort()).toEqual(["comment", "creation_time", "email", "realname", "sysadmin_flag", "update_time", "user_id", "username"]);
    expect(f.logs.length).toBeGreaterThan(0);
    expect(secrets.size).toBeGreaterThan(10);
  });
});
