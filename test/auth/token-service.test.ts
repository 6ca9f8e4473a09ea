import { beforeAll, describe, expect, it } from "vitest";
import { fromB64url, fromUtf8 } from "../../src/util/bytes.js";
import {
  aclPolicy,
  createTokenAuthorizer,
  createTokenService,
  memoryCredentials,
  signJwt,
  verifyToken,
  type MemoryCredentials,
  type TokenServiceOptions,
} from "../../src/auth/index.js";
import { ISSUER, REALM, SERVICE, rawSignText, signer, type Signer } from "./helpers.js";

let key: Signer;
let users: MemoryCredentials;
let service: (r: Request) => Promise<Response>;

const basic = (u: string, p: string) => `Basic ${btoa(`${u}:${p}`)}`;
const payloadOf = (token: string) => JSON.parse(fromUtf8(fromB64url(token.split(".")[1]!))) as Record<string, any>;
const headerOf = (token: string) => JSON.parse(fromUtf8(fromB64url(token.split(".")[0]!))) as Record<string, any>;

function make(extra: Partial<TokenServiceOptions> = {}) {
  return createTokenService({
    issuer: ISSUER,
    service: [SERVICE, "management"],
    keys: key.keys,
    checkCredentials: users,
    publicRepositories: ["library/*", "public/*"],
    ...extra,
  });
}

function get(query: string, auth?: string, svc = service) {
  return svc(new Request(`${REALM}?${query}`, { headers: auth ? { authorization: auth } : {} }));
}
function post(form: Record<string, string> | URLSearchParams, svc = service) {
  return svc(
    new Request(REALM, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form instanceof URLSearchParams ? form : new URLSearchParams(form),
    }),
  );
}
async function tokenOf(res: Response) {
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

beforeAll(async () => {
  key = await signer("token-service");
  users = memoryCredentials({ alice: { password: "alice-pw" }, root: { password: "root-pw", admin: true }, bob: { password: "bob-pw" } });
  service = make();
});

describe("GET (Distribution token spec)", () => {
  it("issues a token with the spec's fields and claims", async () => {
    const before = Math.floor(Date.now() / 1000);
    const body = await tokenOf(await get(`account=alice&scope=repository:alice/app:pull&service=${SERVICE}`, basic("alice", "alice-pw")));
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "issued_at", "token"]);
    expect(body.access_token).toBe(body.token);
    expect(body.expires_in).toBe(60);
    expect(body.issued_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const p = payloadOf(body.token);
    expect(Object.keys(p)).toEqual(["iss", "sub", "aud", "exp", "nbf", "iat", "jti", "access", "uid", "cred_ver"]);
    expect(p).toMatchObject({ uid: (await users.lookupUser("alice"))!.uid, cred_ver: 0 });
    expect(p).toMatchObject({ iss: ISSUER, sub: "alice", aud: SERVICE, access: [{ type: "repository", name: "alice/app", actions: ["pull"] }] });
    expect(p.iat).toBeGreaterThanOrEqual(before);
    expect(p.exp - p.iat).toBe(60);
    expect(p.nbf).toBe(p.iat);
    expect(p.jti).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(new Date(body.issued_at).getTime() / 1000).toBe(p.iat);
    const h = headerOf(body.token);
    expect(h).toMatchObject({ typ: "JWT", alg: "RS256", kid: key.vk.kid });
    expect(h.x5c).toHaveLength(1);
  });

  it("jti is random", async () => {
    const a = await tokenOf(await get(`service=${SERVICE}`));
    const b = await tokenOf(await get(`service=${SERVICE}`));
    expect(payloadOf(a.token).jti).not.toBe(payloadOf(b.token).jti);
  });

  it("x5c can be switched off", async () => {
    const body = await tokenOf(await get(`service=${SERVICE}`, undefined, make({ x5c: false })));
    expect(headerOf(body.token).x5c).toBeUndefined();
    expect(headerOf(body.token).kid).toBe(key.vk.kid);
  });

  it("expires_in is configurable", async () => {
    const body = await tokenOf(await get(`service=${SERVICE}`, undefined, make({ expiresIn: 300 })));
    expect(body.expires_in).toBe(300);
    const p = payloadOf(body.token);
    expect(p.exp - p.iat).toBe(300);
  });

  it("merges repeated, duplicate and space-separated scopes", async () => {
    const q = new URLSearchParams();
    q.append("scope", "repository:alice/a:pull,push");
    q.append("scope", "repository:alice/a:pull,push");
    q.append("scope", "repository:alice/b:pull repository:alice/a:delete");
    q.append("scope", "repository:alice/b:pull");
    q.set("service", SERVICE);
    const p = payloadOf((await tokenOf(await get(q.toString(), basic("alice", "alice-pw")))).token);
    expect(p.access).toEqual([
      { type: "repository", name: "alice/a", actions: ["pull", "push", "delete"] },
      { type: "repository", name: "alice/b", actions: ["pull"] },
    ]);
  });

  it("anonymous: sub empty, public pull only", async () => {
    const q = `service=${SERVICE}&scope=repository:library/alpine:pull,push&scope=repository:alice/app:pull`;
    const p = payloadOf((await tokenOf(await get(q))).token);
    expect(p.sub).toBe("");
    expect(p.access).toEqual([{ type: "repository", name: "library/alpine", actions: ["pull"] }]);
  });

  it("anonymous can be refused", async () => {
    const res = await get(`service=${SERVICE}`, undefined, make({ allowAnonymous: false }));
    expect(res.status).toBe(401);
  });

  it("wrong password → 401 JSON that skopeo prints", async () => {
    for (const auth of [basic("alice", "nope"), basic("nobody", "x"), "Basic !!!notbase64", `Basic ${btoa("no-colon")}`]) {
      const res = await get(`service=${SERVICE}&scope=repository:alice/app:pull`, auth);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Basic realm="registry-kit"');
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await res.text()).toBe('{"error":"unauthorized","details":"bad or missing credentials"}');
    }
  });

  it("stored login: the same Basic string works on every request", async () => {
    const stored = basic("alice", "alice-pw");
    for (let i = 0; i < 3; i++) {
      const p = payloadOf((await tokenOf(await get(`scope=repository:alice/app:pull,push&service=${SERVICE}`, stored))).token);
      expect(p.access).toEqual([{ type: "repository", name: "alice/app", actions: ["pull", "push"] }]);
    }
  });

  it("accepts client_id and client-id, and needs neither", async () => {
    await tokenOf(await get(`service=${SERVICE}&client_id=docker`));
    await tokenOf(await get(`service=${SERVICE}&client-id=docker`));
  });

  it("refuses an unknown service with 400 JSON; no service means the first", async () => {
    const res = await get("service=evil.example&scope=repository:x/y:pull");
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid_request", details: 'unknown service "evil.example"' });
    const body = await tokenOf(await get("scope=repository:library/x:pull"));
    expect(payloadOf(body.token).aud).toBe(SERVICE);
    expect(payloadOf((await tokenOf(await get("service=management"))).token).aud).toBe("management");
  });

  it("malformed and too many scopes → 400 JSON", async () => {
    for (const s of ["repository", "repository:name", "repository::pull", ":x:pull", "repository:x:"]) {
      const res = await get(`service=${SERVICE}&scope=${encodeURIComponent(s)}`);
      expect(res.status, s).toBe(400);
      expect((await res.json()).error).toBe("invalid_scope");
    }
    const many = Array.from({ length: 65 }, (_, i) => `scope=repository:x/r${i}:pull`).join("&");
    expect((await get(`service=${SERVICE}&${many}`)).status).toBe(400);
    const ok = Array.from({ length: 64 }, (_, i) => `scope=repository:x/r${i}:pull`).join("&");
    expect((await get(`service=${SERVICE}&${ok}`)).status).toBe(200);
  });

  it("other methods → 405 JSON", async () => {
    const res = await service(new Request(REALM, { method: "PUT" }));
    expect(res.status).toBe(405);
    expect((await res.json()).error).toBe("invalid_request");
  });
});

describe("access policy", () => {
  const scope = (s: string) => `service=${SERVICE}&scope=${encodeURIComponent(s)}`;
  const access = async (s: string, auth?: string, svc = service) => payloadOf((await tokenOf(await get(scope(s), auth, svc))).token).access;

  it("administrators get everything", async () => {
    expect(await access("repository:bob/app:pull,push,delete", basic("root", "root-pw"))).toEqual([
      { type: "repository", name: "bob/app", actions: ["pull", "push", "delete"] },
    ]);
    expect(await access("registry:catalog:*", basic("root", "root-pw"))).toEqual([{ type: "registry", name: "catalog", actions: ["*"] }]);
  });

  it("users own <username>/*", async () => {
    expect(await access("repository:alice/x/y:pull,push,delete", basic("alice", "alice-pw"))).toEqual([
      { type: "repository", name: "alice/x/y", actions: ["pull", "push", "delete"] },
    ]);
  });

  it("partial grant: fewer actions, never an error", async () => {
    expect(await access("repository:library/alpine:pull,push", basic("alice", "alice-pw"))).toEqual([
      { type: "repository", name: "library/alpine", actions: ["pull"] },
    ]);
    expect(await access("repository:bob/app:pull,push", basic("alice", "alice-pw"))).toEqual([]);
    expect(await access("registry:catalog:*", basic("alice", "alice-pw"))).toEqual([]);
    // "alicex/…" is not alice's namespace.
    expect(await access("repository:alicex/app:pull", basic("alice", "alice-pw"))).toEqual([]);
  });

  it("custom rules: first match wins, ${account}, regex, deny", async () => {
    const svc = make({
      policy: aclPolicy([
        { match: { account: "bob", name: "secret/*" }, actions: [] },
        { match: { account: "/.+/", type: "repository", name: "/(secret|team)\\/.*/" }, actions: ["pull"] },
        { match: { account: "/.+/", type: "repository", name: "home/${account}" }, actions: ["*"] },
      ]),
    });
    expect(await access("repository:secret/x:pull", basic("bob", "bob-pw"), svc)).toEqual([]);
    expect(await access("repository:secret/x:pull,push", basic("alice", "alice-pw"), svc)).toEqual([
      { type: "repository", name: "secret/x", actions: ["pull"] },
    ]);
    expect(await access("repository:home/alice:pull,push,delete", basic("alice", "alice-pw"), svc)).toEqual([
      { type: "repository", name: "home/alice", actions: ["pull", "push", "delete"] },
    ]);
    expect(await access("repository:home/alice:pull", basic("bob", "bob-pw"), svc)).toEqual([]);
    expect(await access("repository:team/x:pull", undefined, svc)).toEqual([]);
  });

  it("never grants more than requested, whatever the policy returns", async () => {
    const svc = make({ policy: async () => [{ type: "repository", name: "x/y", actions: ["*"] }, { type: "repository", name: "z/z", actions: ["push"] }] });
    expect(await access("repository:x/y:pull", undefined, svc)).toEqual([{ type: "repository", name: "x/y", actions: ["pull"] }]);
  });
});

describe("POST (OAuth2 form)", () => {
  it("grant_type=password", async () => {
    const body = await tokenOf(
      await post({ grant_type: "password", username: "alice", password: "alice-pw", service: SERVICE, client_id: "docker", scope: "repository:alice/a:pull repository:library/b:pull" }),
    );
    expect(body.refresh_token).toBeUndefined();
    expect(payloadOf(body.access_token).access).toEqual([
      { type: "repository", name: "alice/a", actions: ["pull"] },
      { type: "repository", name: "library/b", actions: ["pull"] },
    ]);
  });

  it("wrong password → 401 JSON", async () => {
    const res = await post({ grant_type: "password", username: "alice", password: "x", service: SERVICE, client_id: "c" });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "unauthorized", error_description: "bad or missing credentials", details: "bad or missing credentials" });
  });

  it("bad grants → 400 JSON", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ service: SERVICE }, "invalid_request"],
      [{ grant_type: "authorization_code", service: SERVICE }, "unsupported_grant_type"],
      [{ grant_type: "password", username: "alice", service: SERVICE }, "invalid_request"],
      [{ grant_type: "refresh_token", service: SERVICE }, "invalid_request"],
      [{ grant_type: "refresh_token", refresh_token: "not-a-jwt", service: SERVICE }, "invalid_grant"],
    ];
    for (const [form, error] of cases) {
      const res = await post(form);
      expect(res.status, JSON.stringify(form)).toBe(400);
      const body = await res.json();
      expect(body.error).toBe(error);
      expect(typeof body.details).toBe("string");
    }
  });

  it("refresh token flow: offline password grant, then refresh_token grant with other scopes", async () => {
    const first = await tokenOf(
      await post({ grant_type: "password", username: "alice", password: "alice-pw", service: SERVICE, client_id: "c", access_type: "offline", scope: "repository:alice/a:pull" }),
    );
    expect(typeof first.refresh_token).toBe("string");
    const rp = payloadOf(first.refresh_token);
    expect(rp).toMatchObject({ iss: ISSUER, sub: "alice", token_use: "refresh" });
    expect(rp.access).toBeUndefined();

    const second = await tokenOf(
      await post({ grant_type: "refresh_token", refresh_token: first.refresh_token, service: SERVICE, client_id: "c", scope: "repository:alice/b:pull,push" }),
    );
    expect(second.refresh_token).toBeUndefined();
    expect(payloadOf(second.token)).toMatchObject({ sub: "alice", access: [{ type: "repository", name: "alice/b", actions: ["pull", "push"] }] });

    // The refresh token is not an access token.
    const authz = createTokenAuthorizer({ realm: REALM, service: SERVICE, issuer: ISSUER, keys: key.keys });
    const res = await authz(new Request("http://r/v2/", { headers: { authorization: `Bearer ${first.refresh_token}` } }), []);
    expect(res!.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("GET offline_token=true with Basic gives a refresh token; anonymous never does", async () => {
    const body = await tokenOf(await get(`service=${SERVICE}&offline_token=true`, basic("alice", "alice-pw")));
    expect(typeof body.refresh_token).toBe("string");
    expect((await tokenOf(await get(`service=${SERVICE}&offline_token=true`))).refresh_token).toBeUndefined();
  });

  it("a replaced user's refresh token stops working, a new one carries the new admin flag; a deleted user's too, even once the name is taken again", async () => {
    const local = memoryCredentials({ carol: { password: "c-pw" } });
    const svc = make({ checkCredentials: local });
    const refreshToken = async () => (await tokenOf(await get(`service=${SERVICE}&offline_token=true`, basic("carol", "c-pw"), svc))).refresh_token as string;
    const refresh = (refresh_token: string) => post({ grant_type: "refresh_token", refresh_token, service: SERVICE, scope: "repository:zed/x:push" }, svc);
    const expectInvalidGrant = async (res: Response) => {
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe("invalid_grant");
    };
    const before = await refreshToken();
    expect((await refresh(before)).status).toBe(200);
    local.setUser("carol", { password: "c-pw", admin: true });
    await expectInvalidGrant(await refresh(before));
    const admin = await refreshToken();
    const t = await tokenOf(await refresh(admin));
    expect(payloadOf(t.token).access).toEqual([{ type: "repository", name: "zed/x", actions: ["push"] }]);
    local.deleteUser("carol");
    await expectInvalidGrant(await refresh(admin));
    local.setUser("carol", { password: "c-pw", admin: true });
    await expectInvalidGrant(await refresh(admin));
    expect((await refresh(await refreshToken())).status).toBe(200);
  });

  it("a refresh token with a crit header or a non-integer time is invalid_grant; re-signed as is, it works", async () => {
    const { refresh_token } = await tokenOf(await get(`service=${SERVICE}&offline_token=true`, basic("alice", "alice-pw")));
    const claims = payloadOf(refresh_token);
    const sk = await key.keys.signingKey();
    const refresh = (t: string) => post({ grant_type: "refresh_token", refresh_token: t, service: SERVICE });
    expect((await refresh(await signJwt(claims, sk, { x5c: false }))).status).toBe(200);
    const header = JSON.stringify({ typ: "JWT", alg: sk.alg, kid: sk.kid });
    const bad = [
      await signJwt(claims, sk, { x5c: false, header: { crit: ["urn:example:ext"], "urn:example:ext": 1 } }),
      await signJwt(claims, sk, { x5c: false, header: { crit: [] } }),
      await rawSignText(header, JSON.stringify({ ...claims, exp: "EXP" }).replace('"EXP"', "1e400"), sk.key, { name: "RSASSA-PKCS1-v1_5" }),
      await signJwt({ ...claims, iat: claims.iat + 0.5 }, sk, { x5c: false }),
    ];
    for (const t of bad) {
      const res = await refresh(t);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
    }
  });

  it("an access token is not a refresh token", async () => {
    const { token } = await tokenOf(await get(`service=${SERVICE}`, basic("alice", "alice-pw")));
    expect((await post({ grant_type: "refresh_token", refresh_token: token, service: SERVICE })).status).toBe(400);
  });

  it("no refresh tokens without a way to re-check users", async () => {
    const check = async (u: string, p: string) => (u === "dave" && p === "d" ? { name: "dave", admin: false } : undefined);
    const body = await tokenOf(await get(`service=${SERVICE}&offline_token=true`, basic("dave", "d"), make({ checkCredentials: check })));
    expect(body.refresh_token).toBeUndefined();
  });
});

describe("round trip: service → authorizer", () => {
  it("a token from the service is accepted by the authorizer (bundle = the service's certificate)", async () => {
    const authz = createTokenAuthorizer({ realm: REALM, service: SERVICE, issuer: ISSUER, rootCertBundle: key.pem.certificate });
    const needed = [{ type: "repository", name: "alice/app", actions: ["pull", "push"] }];
    for (const svc of [service, make({ x5c: false })]) {
      const { token } = await tokenOf(await get(`service=${SERVICE}&scope=repository:alice/app:pull,push`, basic("alice", "alice-pw"), svc));
      expect(await authz(new Request("http://r/v2/alice/app/blobs/uploads/", { method: "POST", headers: { authorization: `Bearer ${token}` } }), needed)).toBeUndefined();
    }
  });

  it("verifyToken for another audience (the management API)", async () => {
    const opts = { issuer: ISSUER, audience: "management", rootCertBundle: key.pem.certificate };
    const { token } = await tokenOf(await get("service=management", basic("alice", "alice-pw")));
    const v = await verifyToken(token, opts);
    expect(v.subject).toBe("alice");
    const { token: registryToken } = await tokenOf(await get(`service=${SERVICE}`, basic("alice", "alice-pw")));
    await expect(verifyToken(registryToken, opts)).rejects.toThrow(/audience/);
  });
});
