/**
 * The administration routes of the management API in the all-in-one server
 * (`<prefix>/quotas`, `<prefix>/repositories/NAME`): administrators only,
 * the management API's error shape, a policy refusal as 409 unless forced.
 */
import { describe, expect, it } from "vitest";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { pushImage } from "../registry/helpers.js";
import { FAST } from "../users/helpers.js";

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` });
const ADMIN = basic("admin", "Adm1nPassword");

async function server() {
  const yaml = `version: 0.1
storage: { inmemory: {} }
http: { secret: s }
registrykit:
  users: { admin: { password: Adm1nPassword } }
  policy: { immutabletags: { "prod/*": ["*"] }, quotas: { "prod/*": 1MiB, "*": 2MiB } }
`;
  const { config } = resolveConfig({ document: parseConfigText(yaml), env: {}, cwd: "/srv" });
  const app = await createAllInOne({ ...config, keyDirectory: "/nonexistent" }, { storage: memoryStorage(), scrypt: FAST });
  const call = (method: string, path: string, headers: Record<string, string> = ADMIN) => app.handler(new Request(`http://reg.test${path}`, { method, headers }));
  return { app, call, registry: (r: Request) => app.handler(r) };
}

describe("admin routes", () => {
  it("report quota usage, delete repositories, refuse a repository with an immutable tag unless forced", async () => {
    const { app, call, registry } = await server();
    await pushImage(registry, "prod/api", "v1", "prod");
    await pushImage(registry, "dev/api", "v1", "dev");
    const quotas = (await (await call("GET", "/api/quotas")).json()) as { quotas: { namespace: string; used: number; repositories: number }[] };
    expect(quotas.quotas.map((q) => [q.namespace, q.repositories])).toEqual([["prod/*", 1], ["*", 2]]);
    expect(quotas.quotas[1]!.used).toBeGreaterThan(quotas.quotas[0]!.used);
    const one = (await (await call("GET", "/api/quotas?repository=dev/api")).json()) as { quotas: { namespace: string }[] };
    expect(one.quotas.map((q) => q.namespace)).toEqual(["*"]);

    const refused = await call("DELETE", "/api/repositories/prod/api");
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({ errors: [{ code: "CONFLICT", message: "repository prod/api cannot be deleted: it holds the immutable tag v1; add ?force=true to delete it anyway" }] });
    expect((await call("DELETE", "/api/repositories/prod/api?force=true")).status).toBe(200);
    expect((await call("DELETE", "/api/repositories/dev/api")).status).toBe(200);
    expect(await (await registry(new Request("http://reg.test/v2/_catalog"))).json()).toEqual({ repositories: [] });
    await app.close();
  });

  it("answer 401 without credentials, 403 to a non-administrator, 405 and 400 for bad requests", async () => {
    const { app, call } = await server();
    const created = await call("POST", "/api/users", { ...ADMIN });
    expect(created.status).toBe(415); // no JSON body: the users API answered, the admin routes did not take /api/users
    const bob = await app.handler(new Request("http://reg.test/api/users", {
      method: "POST", headers: { ...ADMIN, "content-type": "application/json" },
      body: JSON.stringify({ username: "bob", email: "bob@example.com", password: "Bob-Pass1", realname: "Bob" }),
    }));
    expect(bob.status).toBe(201);
    const anonymous = await call("GET", "/api/quotas", {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe('Basic realm="registry-kit"');
    expect((await call("GET", "/api/quotas", basic("admin", "wrong"))).status).toBe(401);
    const forbidden = await call("DELETE", "/api/repositories/x", basic("bob", "Bob-Pass1"));
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual({ errors: [{ code: "FORBIDDEN", message: "administrators only" }] });
    expect((await call("POST", "/api/quotas")).status).toBe(405);
    expect((await call("GET", "/api/repositories/x")).status).toBe(405);
    expect((await call("DELETE", "/api/repositories/Bad%20Name")).status).toBe(400);
    expect((await call("DELETE", "/api/repositories/missing")).status).toBe(404);
    await app.close();
  });
});
