/**
 * The web page (registry-kit/ui) inside the all-in-one server, driven by
 * requests as a browser sends them: sign-in, what each user sees, escaping of
 * attacker-controlled labels, CSRF and origin checks, administrators' actions.
 * The browser itself (Chromium, axe) is in test/interop/ui-browser.test.ts.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { FAST } from "../users/helpers.js";

const ORIGIN = "http://registry.test:5000";
const ADMIN = { name: "admin", password: "Adm1nPassword" };
const ALICE = { name: "alice", password: "Al1cePassword" };
const HOSTILE = `<script>window.pwned=1</script><img src=x onerror=alert(1)>`;

let dir: string;
let app: AllInOne;

const basic = (u: { name: string; password: string }) => `Basic ${Buffer.from(`${u.name}:${u.password}`).toString("base64")}`;
const sha = (b: Uint8Array) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const call = (p: string, init: RequestInit = {}) => app.handler(new Request(`${ORIGIN}${p}`, init));

async function registryToken(scope: string): Promise<string> {
  const res = await call(`/service/token?service=registry-kit&scope=${encodeURIComponent(scope)}`, { headers: { authorization: basic(ADMIN) } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

/** Push an image with one layer and a config carrying `labels`, tagged `tag`. */
async function push(name: string, tag: string, labels: Record<string, string>): Promise<string> {
  const auth = { authorization: `Bearer ${await registryToken(`repository:${name}:pull,push,delete`)}` };
  const layer = new TextEncoder().encode(`layer of ${name}:${tag}`);
  const config = new TextEncoder().encode(JSON.stringify({
    architecture: "amd64", os: "linux", created: "2026-11-01T00:00:00Z",
    config: { Entrypoint: ["/bin/app"], Env: ["PATH=/usr/bin", `GREETING=${HOSTILE}`], Labels: labels },
    rootfs: { type: "layers", diff_ids: [sha(layer)] }, history: [{ created_by: `RUN ${HOSTILE}` }],
  }));
  for (const blob of [layer, config]) {
    const res = await call(`/v2/${name}/blobs/uploads/?digest=${sha(blob)}`, { method: "POST", body: blob, headers: auth });
    expect(res.status).toBe(201);
  }
  const manifest = new TextEncoder().encode(JSON.stringify({
    schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: sha(config), size: config.byteLength },
    layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: sha(layer), size: layer.byteLength }],
  }));
  const res = await call(`/v2/${name}/manifests/${tag}`, { method: "PUT", body: manifest, headers: { ...auth, "content-type": "application/vnd.oci.image.manifest.v1+json" } });
  expect(res.status).toBe(201);
  return sha(manifest);
}

/** PUT a manifest document as the administrator; its digest. */
async function putManifest(name: string, reference: string, doc: object, mediaType: string): Promise<string> {
  const auth = { authorization: `Bearer ${await registryToken(`repository:${name}:pull,push`)}` };
  const bytes = new TextEncoder().encode(JSON.stringify(doc));
  const res = await call(`/v2/${name}/manifests/${reference}`, { method: "PUT", body: bytes, headers: { ...auth, "content-type": mediaType } });
  expect(res.status, await res.text()).toBe(201);
  return sha(bytes);
}

/** Sign in; the session cookie. */
async function signIn(user: { name: string; password: string }): Promise<string> {
  const res = await call("/ui/sign-in", { method: "POST", body: new URLSearchParams({ username: user.name, password: user.password }), headers: { origin: ORIGIN } });
  expect(res.status).toBe(303);
  const cookie = res.headers.get("set-cookie")!;
  expect(cookie).toMatch(/^rk_ui_session=[^;]+; Path=\/ui\/; HttpOnly; SameSite=Strict; Max-Age=28800$/);
  return cookie.split(";")[0]!;
}

/** A signed-in session per user, made once (each sign-in costs an scrypt check). */
const sessions = new Map<string, Promise<string>>();
const session = (user: { name: string; password: string }): Promise<string> => {
  let cookie = sessions.get(user.name);
  if (!cookie) sessions.set(user.name, (cookie = signIn(user)));
  return cookie;
};

const page = async (cookie: string, p: string) => {
  const res = await call(p, { headers: { cookie } });
  return { status: res.status, headers: res.headers, text: await res.text() };
};
/** The notice code and status an action's redirect carries. */
const message = (res: Response) => {
  const query = new URL(res.headers.get("location")!, ORIGIN).searchParams;
  return [query.get("msg"), query.get("status")].filter((v) => v !== null).join(" ");
};
const csrfOf = (text: string) => /name="csrf" value="([^"]+)"/.exec(text)![1]!;
const post = (cookie: string, p: string, form: Record<string, string>, origin = ORIGIN) =>
  call(p, { method: "POST", body: new URLSearchParams(form), headers: { cookie, origin } });

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-ui-"));
  const { config } = resolveConfig({ document: undefined, env: { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: ADMIN.password, REGISTRY_STORAGE_DELETE_ENABLED: "true" }, cwd: dir });
  // Fast scrypt for the hashes this test makes: every sign-in checks one.
  app = await createAllInOne(config, { origin: ORIGIN, storage: memoryStorage(), scrypt: FAST });
  const created = await call("/api/users", {
    method: "POST", headers: { authorization: basic(ADMIN), "content-type": "application/json" },
    body: JSON.stringify({ username: ALICE.name, email: "alice@example.test", password: ALICE.password }),
  });
  expect(created.status).toBe(201);
  await push("alice/app", "v1", { "org.opencontainers.image.title": HOSTILE });
  await push("alice/app", "v2", {});
  await push("bob/secret", "v1", {});
});
afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the web page of the all-in-one server", () => {
  it("sends a visitor without a session to the sign-in form, with a strict CSP", async () => {
    const res = await call("/ui/");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/ui/sign-in?next=%2Fui%2F");
    const form = await call("/ui/sign-in");
    expect(form.headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(await form.text()).toContain('<label for="password">Password</label>');
  });

  it("refuses a wrong password with 401 and no cookie", async () => {
    const res = await call("/ui/sign-in", { method: "POST", body: new URLSearchParams({ username: "alice", password: "wrong" }) });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(await res.text()).toContain("Wrong user name or password.");
  });

  it("shows a user only the repositories the policy lets them pull", async () => {
    const alice = await session(ALICE);
    const list = await page(alice, "/ui/");
    expect(list.status).toBe(200);
    expect(list.text).toContain('href="/ui/repository?name=alice%2Fapp"');
    expect(list.text).not.toContain("bob/secret");
    expect((await page(alice, "/ui/repository?name=bob%2Fsecret")).status).toBe(404);
    expect((await page(alice, "/ui/image?name=bob%2Fsecret&ref=v1")).status).toBe(404);
    const admin = await page(await session(ADMIN), "/ui/");
    expect(admin.text).toContain("bob/secret");
    expect(admin.text).toContain("alice/app");
  });

  it("lists tags with digest, size and push time, sorted by name or push time", async () => {
    const alice = await session(ALICE);
    const byName = await page(alice, "/ui/repository?name=alice%2Fapp");
    expect(byName.text.indexOf(">v1</a>")).toBeLessThan(byName.text.indexOf(">v2</a>"));
    expect(byName.text).toMatch(/sha256:[0-9a-f]{64}/);
    expect(byName.text).toMatch(/\d+ B|KiB/);
    const byPush = await page(alice, "/ui/repository?name=alice%2Fapp&sort=pushed");
    expect(byPush.text.indexOf(">v2</a>")).toBeLessThan(byPush.text.indexOf(">v1</a>"));
  });

  it("escapes labels, env and history: attacker-controlled text never becomes markup", async () => {
    const alice = await session(ALICE);
    const image = await page(alice, "/ui/image?name=alice%2Fapp&ref=v1");
    expect(image.status).toBe(200);
    expect(image.text).not.toContain("<script>window.pwned");
    expect(image.text).not.toContain("<img src=x");
    expect(image.text).toContain("&lt;script&gt;window.pwned=1&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(image.text).toContain("podman pull registry.test:5000/alice/app:v1");
    expect(image.text).toContain("/bin/app");
    // The only scripts are the page's own file.
    expect(image.text.match(/<script/g)).toHaveLength(1);
  });

  it("shows the platforms of an index and the referrers of an image with their artifact types", async () => {
    const alice = await session(ALICE);
    const v1 = /<dd class="mono">(sha256:[0-9a-f]{64})<\/dd>/.exec((await page(alice, "/ui/image?name=alice%2Fapp&ref=v1")).text)![1]!;
    await putManifest("alice/app", "multi", {
      schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [{ mediaType: "application/vnd.oci.image.manifest.v1+json", digest: v1, size: 1, platform: { os: "linux", architecture: "arm64", variant: "v8" } }],
    }, "application/vnd.oci.image.index.v1+json");
    const empty = new TextEncoder().encode("{}");
    const auth = { authorization: `Bearer ${await registryToken("repository:alice/app:pull,push")}` };
    expect((await call(`/v2/alice/app/blobs/uploads/?digest=${sha(empty)}`, { method: "POST", body: empty, headers: auth })).status).toBe(201);
    const sbom = await putManifest("alice/app", "sbom", {
      schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", artifactType: "application/vnd.example.sbom+json",
      config: { mediaType: "application/vnd.oci.empty.v1+json", digest: sha(empty), size: 2 }, layers: [{ mediaType: "application/vnd.oci.empty.v1+json", digest: sha(empty), size: 2 }],
      subject: { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: v1, size: 1 },
    }, "application/vnd.oci.image.manifest.v1+json");
    const image = await page(alice, "/ui/image?name=alice%2Fapp&ref=v1");
    expect(image.text).toContain("<td>application/vnd.example.sbom+json</td>");
    expect(image.text).toContain(`ref=${encodeURIComponent(sbom)}`);
    const index = await page(alice, "/ui/image?name=alice%2Fapp&ref=multi");
    expect(index.status).toBe(200);
    expect(index.text).toContain("<h2>Platforms</h2>");
    expect(index.text).toContain(">linux/arm64/v8</a>");
  });

  it("answers 400 for a name or reference that is not valid, without calling further", async () => {
    const alice = await session(ALICE);
    expect((await page(alice, "/ui/image?name=alice%2Fapp&ref=..%2F..%2F_catalog")).status).toBe(400);
    expect((await page(alice, "/ui/image?name=alice%2Fapp%3Fx%3D1&ref=v1")).status).toBe(400);
    expect((await page(alice, "/ui/repository?name=alice%2F..%2Fbob")).status).toBe(400);
  });

  it("refuses a form without the session's CSRF token, and one from another origin", async () => {
    const admin = await session(ADMIN);
    const csrf = csrfOf((await page(admin, "/ui/repository?name=alice%2Fapp")).text);
    expect((await post(admin, "/ui/delete-tag", { name: "alice/app", tag: "v2" })).status).toBe(403);
    // Another token: its first character changed (to "y" when it was "x", as one token in 64 starts).
    const forged = (csrf.startsWith("x") ? "y" : "x") + csrf.slice(1);
    expect(forged).not.toBe(csrf);
    expect((await post(admin, "/ui/delete-tag", { name: "alice/app", tag: "v2", csrf: forged })).status).toBe(403);
    expect((await post(admin, "/ui/delete-tag", { name: "alice/app", tag: "v2", csrf }, "https://evil.example")).status).toBe(403);
    expect((await page(admin, "/ui/repository?name=alice%2Fapp")).text).toContain(">v2</a>");
  });

  it("lets an administrator delete a tag; a user without delete rights is refused by the registry", async () => {
    await push("bob/secret", "old", {});
    const alice = await session(ALICE);
    const aliceCsrf = csrfOf((await page(alice, "/ui/")).text);
    const refused = await post(alice, "/ui/delete-tag", { name: "bob/secret", tag: "old", csrf: aliceCsrf });
    expect(refused.status).toBe(303);
    expect(message(refused)).toBe("tag-delete-failed 401");
    const admin = await session(ADMIN);
    const tags = (await page(admin, "/ui/repository?name=bob%2Fsecret")).text;
    expect(tags).toContain('aria-label="Delete tag old"');
    expect((await page(alice, "/ui/repository?name=alice%2Fapp")).text).toContain('aria-label="Delete tag v1"');
    const csrf = csrfOf(tags);
    const done = await post(admin, "/ui/delete-tag", { name: "bob/secret", tag: "old", csrf });
    expect(done.status).toBe(303);
    expect(message(done)).toBe("tag-deleted");
    expect((await page(admin, "/ui/repository?name=bob%2Fsecret")).text).not.toContain(">old</a>");
  });

  it("lets an administrator create a user who then signs in; users are for administrators only", async () => {
    const alice = await session(ALICE);
    expect((await page(alice, "/ui/users")).status).toBe(403);
    const admin = await session(ADMIN);
    const csrf = csrfOf((await page(admin, "/ui/users")).text);
    const created = await post(admin, "/ui/users/create", { username: "carol", email: "carol@example.test", password: "Car0lPassword", csrf });
    expect(message(created)).toBe("user-created");
    expect((await page(admin, "/ui/users")).text).toContain("<td>carol</td>");
    await signIn({ name: "carol", password: "Car0lPassword" });
  });

  it("ends a session when the user's password changes, and ignores a forged cookie", async () => {
    const bob = { name: "dave", password: "Dav3Password1" };
    const admin = await session(ADMIN);
    const csrf = csrfOf((await page(admin, "/ui/users")).text);
    await post(admin, "/ui/users/create", { username: bob.name, email: "dave@example.test", password: bob.password, csrf });
    const daves = await signIn(bob);
    expect((await page(daves, "/ui/")).status).toBe(200);
    const users = await page(admin, "/ui/users");
    const id = new RegExp(`<td>dave</td>[\\s\\S]*?name="id" value="(\\d+)"`).exec(users.text)![1]!;
    await post(admin, "/ui/users/password", { id, password: "N3wPassword99", csrf });
    expect((await page(daves, "/ui/")).status).toBe(303);
    const [name, value] = daves.split("=");
    expect((await page(`${name}=${value!.slice(0, -2)}xx`, "/ui/")).status).toBe(303);
  });

  it("redirects after sign-in only to its own pages", async () => {
    const res = await call("/ui/sign-in", { method: "POST", body: new URLSearchParams({ username: ALICE.name, password: ALICE.password, next: "//evil.example/ui/" }) });
    expect(res.headers.get("location")).toBe("/ui/");
    const inside = await call("/ui/sign-in", { method: "POST", body: new URLSearchParams({ username: ALICE.name, password: ALICE.password, next: "/ui/repository?name=alice%2Fapp" }) });
    expect(inside.headers.get("location")).toBe("/ui/repository?name=alice%2Fapp");
  });
});
