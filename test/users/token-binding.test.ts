/**
 * Refresh tokens (token endpoint, `grant_type=refresh_token`) and management
 * tokens (Bearer tokens of the `/api/users` service) are bound to the user's
 * immutable `uid` and its `credentialVersion`. A password change by the user,
 * an administrator's reset, a change of the administrator role, and a delete
 * followed by a new user of the same name each make the tokens issued before
 * refused: 400 `invalid_grant` at the token endpoint (RFC 6749 §5.2), 401 with
 * the management service's error body. Tokens issued after the change work.
 * Everything is real: stores, scrypt (cheap parameters), keys, token service,
 * verifier and management service.
 */
import { describe, expect, it } from "vitest";
import { createTokenService, createTokenVerifier, generatedKeys, signJwt } from "../../src/auth/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import {
  anyAuthenticator, basicAuthenticator, bearerAuthenticator, createUserService, hashPassword, memoryUserStore, storageUserStore,
  storeCredentialCheck, type UserStore,
} from "../../src/users/index.js";

const FAST = { N: 16, r: 8, p: 1 };
const ISSUER = "binding-issuer";
const REGISTRY = "registry.test";
const MANAGEMENT = "registry.test-management";
const ROOT = ["root", "Root1234"] as const;

interface Tokens {
  refresh: string;
  management: string;
}

async function setup(store: UserStore) {
  const root = await store.create({ username: "root", email: "", realname: "", comment: "", sysadmin: true, passwordHash: await hashPassword(ROOT[1], FAST) });
  const alice = await store.create({ username: "alice", email: "", realname: "", comment: "", sysadmin: false, passwordHash: await hashPassword("Alice1234", FAST) });
  const keys = generatedKeys({ alg: "ES256" });
  const check = storeCredentialCheck(store, { scrypt: FAST });
  const tokenService = createTokenService({ issuer: ISSUER, service: [REGISTRY, MANAGEMENT], keys, checkCredentials: check });
  const verifier = createTokenVerifier({ issuer: ISSUER, audience: MANAGEMENT, keys });
  const users = createUserService({
    store,
    scrypt: FAST,
    authenticate: anyAuthenticator(bearerAuthenticator(async (t) => (await verifier.verify(t)).claims, store), basicAuthenticator(check)),
  });

  const form = (fields: Record<string, string>) =>
    tokenService(
      new Request("http://auth.test/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ service: MANAGEMENT, client_id: "test", ...fields }),
      }),
    );
  const basic = (name: string, password: string) => `Basic ${btoa(`${name}:${password}`)}`;
  const api = (authorization: string, method: string, path: string, body?: unknown) =>
    users(
      new Request(`http://registry.test/api/users${path}`, {
        method,
        headers: { authorization, ...(body !== undefined && { "content-type": "application/json" }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
    );
  const asRoot = (method: string, path: string, body?: unknown) => api(basic(...ROOT), method, path, body);

  /** Sign in with the password grant; a refresh token and a management token. */
  async function signIn(name: string, password: string): Promise<Tokens> {
    const res = await form({ grant_type: "password", username: name, password, access_type: "offline" });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { access_token: string; refresh_token: string };
    return { refresh: body.refresh_token, management: body.access_token };
  }

  const refresh = (token: string) => form({ grant_type: "refresh_token", refresh_token: token });
  const current = (token: string) => api(`Bearer ${token}`, "GET", "/current");

  async function expectWorking(tokens: Tokens, name: string): Promise<void> {
    const refreshed = await refresh(tokens.refresh);
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    // A management token issued through the refresh grant works too.
    const fresh = ((await refreshed.json()) as { access_token: string }).access_token;
    for (const token of [tokens.management, fresh]) {
      const res = await current(token);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { username: string }).username).toBe(name);
    }
  }

  async function expectRefused(tokens: Tokens): Promise<void> {
    const refreshed = await refresh(tokens.refresh);
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");
    const res = await current(tokens.management);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect(await res.json()).toEqual({ errors: [{ code: "UNAUTHORIZED", message: "invalid credentials" }] });
  }

  return { store, root, alice, keys, api, asRoot, signIn, expectWorking, expectRefused };
}

const stores: [string, () => UserStore][] = [
  ["memoryUserStore", () => memoryUserStore()],
  ["storageUserStore", () => storageUserStore(memoryStorage())],
];

describe.each(stores)("token binding on %s", (_name, makeStore) => {
  it("a password change by the user (through the management token itself) refuses the old tokens", async () => {
    const t = await setup(makeStore());
    const old = await t.signIn("alice", "Alice1234");
    await t.expectWorking(old, "alice");
    const changed = await t.api(`Bearer ${old.management}`, "PUT", `/${t.alice.id}/password`, { old_password: "Alice1234", new_password: "Changed123" });
    expect(changed.status).toBe(204);
    await t.expectRefused(old);
    await t.expectWorking(await t.signIn("alice", "Changed123"), "alice");
  });

  it("an administrator's password reset refuses the old tokens", async () => {
    const t = await setup(makeStore());
    const old = await t.signIn("alice", "Alice1234");
    await t.expectWorking(old, "alice");
    expect((await t.asRoot("PUT", `/${t.alice.id}/password`, { new_password: "Reset1234" })).status).toBe(204);
    await t.expectRefused(old);
    await t.expectWorking(await t.signIn("alice", "Reset1234"), "alice");
  });

  it("granting and revoking the administrator role each refuse the tokens issued before", async () => {
    const t = await setup(makeStore());
    const user = await t.signIn("alice", "Alice1234");
    expect((await t.asRoot("PUT", `/${t.alice.id}/sysadmin`, { sysadmin_flag: true })).status).toBe(200);
    await t.expectRefused(user);
    const admin = await t.signIn("alice", "Alice1234");
    await t.expectWorking(admin, "alice");
    expect((await t.api(`Bearer ${admin.management}`, "GET", "")).status).toBe(200);
    expect((await t.asRoot("PUT", `/${t.alice.id}/sysadmin`, { sysadmin_flag: false })).status).toBe(200);
    await t.expectRefused(admin);
    const again = await t.signIn("alice", "Alice1234");
    await t.expectWorking(again, "alice");
    expect((await t.api(`Bearer ${again.management}`, "GET", "")).status).toBe(403);
  });

  it("a deleted user's tokens stay refused when a new user gets the same name and password", async () => {
    const t = await setup(makeStore());
    const old = await t.signIn("alice", "Alice1234");
    expect((await t.asRoot("DELETE", `/${t.alice.id}`)).status).toBe(204);
    await t.expectRefused(old);
    const created = await t.asRoot("POST", "", { username: "alice", email: "alice@example.test", password: "Alice1234" });
    expect(created.status).toBe(201);
    await t.expectRefused(old);
    await t.expectWorking(await t.signIn("alice", "Alice1234"), "alice");
  });

  it("profile changes and another user's changes leave the tokens working", async () => {
    const t = await setup(makeStore());
    const tokens = await t.signIn("alice", "Alice1234");
    expect((await t.asRoot("PUT", `/${t.alice.id}`, { email: "new@example.test", realname: "Alice", comment: "c" })).status).toBe(200);
    expect((await t.asRoot("PUT", `/${t.root.id}/password`, { new_password: "Other1234", old_password: ROOT[1] })).status).toBe(204);
    await t.expectWorking(tokens, "alice");
  });

  it("tokens bound to the name only (as issued before binding) are refused", async () => {
    const t = await setup(makeStore());
    const key = await t.keys.signingKey();
    const now = Math.floor(Date.now() / 1000);
    const times = { iat: now, nbf: now, exp: now + 600, jti: "x" };
    const tokens = {
      refresh: await signJwt({ iss: ISSUER, sub: "alice", aud: ISSUER, token_use: "refresh", ...times }, key),
      management: await signJwt({ iss: ISSUER, sub: "alice", aud: MANAGEMENT, access: [], ...times }, key),
    };
    await t.expectRefused(tokens);
    // The same claims with alice's binding are accepted: only the binding was missing.
    const bound = { uid: t.alice.uid, cred_ver: t.alice.credentialVersion };
    await t.expectWorking(
      {
        refresh: await signJwt({ iss: ISSUER, sub: "alice", aud: ISSUER, token_use: "refresh", ...times, ...bound }, key),
        management: await signJwt({ iss: ISSUER, sub: "alice", aud: MANAGEMENT, access: [], ...times, ...bound }, key),
      },
      "alice",
    );
  });
});
