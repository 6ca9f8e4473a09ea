/**
 * The web page composed from the core's parts only (registry, token
 * authorizer, users service, memory stores; no `node:` module, no server),
 * so that scripts/runtimes.mjs runs it under Node 22/24, Bun and Deno too:
 * the page works in the core's runtimes. Sign in, the repositories a user
 * may pull, an image page with an escaped hostile label, an administrator's
 * tag delete.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { bindingClaims, createTokenAuthorizer, defaultPolicy, generatedKeys, signJwt, type Access, type Principal } from "../../src/auth/index.js";
import { createRegistry, tagDetails } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { createUi } from "../../src/ui/index.js";
import { bearerAuthenticator, createUserService, hashPassword, memoryUserStore, storeCredentialCheck } from "../../src/users/index.js";
import { bytes, pushBlob, sha256 } from "../registry/helpers.js";
import { FAST } from "../users/helpers.js";

const ORIGIN = "http://ui.test";
const HOSTILE = "<script>alert(1)</script>";
let ui: (request: Request) => Promise<Response>;

const call = (path: string, init: RequestInit = {}) => ui(new Request(`${ORIGIN}${path}`, init));
async function signIn(username: string, password: string): Promise<string> {
  const res = await call("/ui/sign-in", { method: "POST", body: new URLSearchParams({ username, password }), headers: { origin: ORIGIN } });
  expect(res.status).toBe(303);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}
const page = async (cookie: string, path: string) => {
  const res = await call(path, { headers: { cookie } });
  return { status: res.status, text: await res.text() };
};

beforeAll(async () => {
  const keys = generatedKeys({ alg: "ES256" });
  const storage = memoryStorage();
  const store = memoryUserStore();
  await store.create({ username: "root", email: "root@example.test", realname: "", comment: "", sysadmin: true, passwordHash: await hashPassword("Root1234", FAST) });
  await store.create({ username: "alice", email: "alice@example.test", realname: "", comment: "", sysadmin: false, passwordHash: await hashPassword("Alice1234", FAST) });
  const registry = createRegistry({
    storage, uploadSecret: "ui-core-upload-secret", deleteEnabled: true,
    authorize: createTokenAuthorizer({ realm: `${ORIGIN}/token`, service: "registry", issuer: "ui-core", keys }),
  });
  const token = async (principal: Principal | undefined, audience: "registry" | "management", access: Access[]) => {
    const now = Math.floor(Date.now() / 1000);
    return signJwt({
      iss: "ui-core", sub: principal?.name ?? "ui", aud: audience === "registry" ? "registry" : "management", iat: now, nbf: now - 5, exp: now + 60,
      jti: crypto.randomUUID(), access, ...(principal ? bindingClaims(principal) : {}),
    }, await keys.signingKey(), { x5c: false });
  };
  const { createTokenVerifier } = await import("../../src/auth/index.js");
  const verifier = createTokenVerifier({ issuer: "ui-core", audience: "management", keys });
  const users = createUserService({ store, prefix: "/api", authMode: "db", authenticate: bearerAuthenticator(async (t) => (await verifier.verify(t)).claims, store) });
  const check = storeCredentialCheck(store, { scrypt: FAST });
  ui = createUi({
    registry, users: { handler: users, path: "/api/users" }, policy: defaultPolicy(), token, signIn: check, currentUser: check.lookupUser,
    tags: (name) => tagDetails(storage, name), sessionSecret: crypto.getRandomValues(new Uint8Array(32)),
  });
  // Seed through the registry with a root token: alice/app (with a hostile label) and root/private.
  const seed = async (name: string, labels: Record<string, string>) => {
    const auth = { authorization: `Bearer ${await token({ name: "root", admin: true }, "registry", [{ type: "repository", name, actions: ["pull", "push"] }])}` };
    const authed = (r: (request: Request) => Promise<Response>) => (request: Request) => {
      const headers = new Headers(request.headers);
      headers.set("authorization", auth.authorization);
      return r(new Request(request, { headers }));
    };
    const configText = JSON.stringify({ architecture: "arm64", os: "linux", config: { Labels: labels } });
    const config = await pushBlob(authed(registry), name, configText);
    const layer = await pushBlob(authed(registry), name, "layer");
    const manifest = JSON.stringify({
      schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: config, size: bytes(configText).byteLength },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: layer, size: 5 }],
    });
    const put = await registry(new Request(`${ORIGIN}/v2/${name}/manifests/v1`, { method: "PUT", body: manifest, headers: { ...auth, "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(put.status).toBe(201);
    return sha256(manifest);
  };
  await seed("alice/app", { title: HOSTILE });
  await seed("root/private", {});
});

describe("the web page from the core's parts", () => {
  it("shows alice only what she may pull, and her image with the hostile label escaped", async () => {
    const alice = await signIn("alice", "Alice1234");
    const list = await page(alice, "/ui/");
    expect(list.text).toContain(">alice/app</a>");
    expect(list.text).not.toContain("root/private");
    const image = await page(alice, "/ui/image?name=alice%2Fapp&ref=v1");
    expect(image.status).toBe(200);
    expect(image.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(image.text).not.toContain(HOSTILE);
    expect(image.text).toContain("linux/arm64");
  });

  it("lets the administrator delete a tag and manage users", async () => {
    const root = await signIn("root", "Root1234");
    const tags = await page(root, "/ui/repository?name=root%2Fprivate");
    const csrf = /name="csrf" value="([^"]+)"/.exec(tags.text)![1]!;
    const del = await call("/ui/delete-tag", { method: "POST", body: new URLSearchParams({ name: "root/private", tag: "v1", csrf }), headers: { cookie: root, origin: ORIGIN } });
    expect(new URL(del.headers.get("location")!, ORIGIN).searchParams.get("msg")).toBe("tag-deleted");
    expect((await page(root, "/ui/users")).text).toContain("<td>alice</td>");
  });
});
