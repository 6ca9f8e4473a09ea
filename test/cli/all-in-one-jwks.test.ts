/**
 * The all-in-one server and JWKS (issue 17, item 7): its token service's
 * keys published at /.well-known/jwks.json, a second all-in-one trusting
 * that JWKS (as auth.token.jwks) for the first one's tokens, with and
 * without x5c in them, autoredirect, and a redirect-capable storage behind
 * storage.redirect.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "../../src/auth/index.js";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { parseConfigText, resolveConfig, type AllInOneConfig } from "../../src/server/config/config.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { FAST } from "../users/helpers.js";

const ISSUER_ORIGIN = "http://issuer.test:5000";
const ORIGIN = "http://registry.test:5001";
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-aio-jwks-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function config(yaml: string): AllInOneConfig {
  return resolveConfig({ document: parseConfigText(yaml), env: {}, cwd: dir }).config;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

async function issuer(label: string, x5c: boolean): Promise<AllInOne> {
  return createAllInOne(config(`
version: 0.1
storage: {inmemory: {}}
auth: {token: {service: shared, issuer: the-issuer}}
registrykit:
  keydirectory: ${label}-keys
  tokenservice: {x5c: ${x5c}}
  users: {admin: {username: admin, password: Adm1nPassword}}
`), { origin: ISSUER_ORIGIN, storage: memoryStorage(), scrypt: FAST });
}

async function tokenFrom(app: AllInOne): Promise<string> {
  const res = await app.handler(new Request(`${ISSUER_ORIGIN}/service/token?service=shared&scope=repository:team/app:pull`, {
    headers: { authorization: basic("admin", "Adm1nPassword") },
  }));
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

describe("all-in-one: the published JWKS, trusted by another all-in-one", () => {
  for (const x5c of [true, false]) {
    it(`tokens ${x5c ? "with" : "without"} x5c verify against the saved JWKS; a registry without it refuses them`, async () => {
      const first = await issuer(`x5c-${x5c}`, x5c);
      const published = await first.handler(new Request(`${ISSUER_ORIGIN}/.well-known/jwks.json`));
      expect(published.status).toBe(200);
      const jwks = await published.text();
      expect(JSON.parse(jwks).keys[0].kid).toBe(first.info.tokenService!.kid);
      const jwksFile = path.join(dir, `jwks-${x5c}.json`);
      await writeFile(jwksFile, jwks);

      const token = await tokenFrom(first);
      expect("x5c" in decodeJwt(token).header).toBe(x5c);
      const second = await createAllInOne(config(`
version: 0.1
storage: {inmemory: {}}
auth: {token: {realm: "${ISSUER_ORIGIN}/service/token", service: shared, issuer: the-issuer, jwks: ${jwksFile}}}
`), { origin: ORIGIN, storage: memoryStorage() });
      expect(second.info.auth).toMatchObject({ mode: "token", external: true, jwks: jwksFile });
      const listed = await second.handler(new Request(`${ORIGIN}/v2/team/app/tags/list`, { headers: { authorization: `Bearer ${token}` } }));
      expect(listed.status).toBe(404); // authorized; the repository is empty
      expect(((await listed.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe("NAME_UNKNOWN");

      const other = await issuer(`other-${x5c}`, x5c);
      const foreign = await tokenFrom(other);
      const refused = await second.handler(new Request(`${ORIGIN}/v2/team/app/tags/list`, { headers: { authorization: `Bearer ${foreign}` } }));
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    });
  }

  it("autoredirect with our own token service sends clients to its path on the host they used", async () => {
    const app = await createAllInOne(config(`
version: 0.1
storage: {inmemory: {}}
auth: {token: {autoredirect: true}}
registrykit: {keydirectory: auto-keys, tokenservice: {path: /tok}}
`), { origin: ORIGIN, storage: memoryStorage() });
    const res = await app.handler(new Request("http://another.name:8443/v2/"));
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="http://another.name:8443/tok",service="registry-kit"');
  });
});

describe("all-in-one: storage.redirect", () => {
  const redirecting = (): StorageDriver => {
    const inner = memoryStorage();
    return { ...inner, name: inner.name, redirectURL: async (key) => `https://store.test/${key}` };
  };
  const pushAndGet = async (app: AllInOne): Promise<Response> => {
    const body = new TextEncoder().encode("layer");
    const digest = `sha256:${Buffer.from(await crypto.subtle.digest("SHA-256", body)).toString("hex")}`;
    const put = await app.handler(new Request(`${ORIGIN}/v2/r/blobs/uploads/?digest=${digest}`, { method: "POST", body }));
    expect(put.status).toBe(201);
    return app.handler(new Request(`${ORIGIN}/v2/r/blobs/${digest}`));
  };

  it("redirects blob GETs by default and serves them with storage.redirect.disable: true", async () => {
    const on = await createAllInOne(config("version: 0.1\nstorage: {inmemory: {}}\nregistrykit: {keydirectory: r1}\n"), { origin: ORIGIN, storage: redirecting() });
    expect(on.info.storage).toBe("memory; blob GETs redirect to presigned URLs");
    const redirected = await pushAndGet(on);
    expect(redirected.status).toBe(307);
    expect(redirected.headers.get("location")).toMatch(/^https:\/\/store\.test\/blobs\/sha256\//);
    const off = await createAllInOne(config("version: 0.1\nstorage: {inmemory: {}, redirect: {disable: true}}\nregistrykit: {keydirectory: r2}\n"), { origin: ORIGIN, storage: redirecting() });
    expect(off.info.storage).toBe("memory");
    const served = await pushAndGet(off);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe("layer");
  });
});
