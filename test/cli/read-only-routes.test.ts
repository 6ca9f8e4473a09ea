/**
 * Read-only mode (`storage.maintenance.readonly`) in the all-in-one server
 * covers every route that changes repositories or blobs (issue 41, item 10):
 * the registry's writes, the administrators' repository delete and the web
 * page's tag delete are refused with 405 and change nothing; reads, quotas,
 * sign-in and the user accounts keep working.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { pushImage } from "../registry/helpers.js";
import { FAST } from "../users/helpers.js";

const ORIGIN = "http://registry.test:5000";
const ADMIN = { name: "admin", password: "Adm1nPassword" };
const basic = `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString("base64")}`;

let dir: string;
let writable: AllInOne;
let readOnly: AllInOne;
const storage = memoryStorage();
const call = (p: string, init: RequestInit = {}, server = readOnly) => server.handler(new Request(`${ORIGIN}${p}`, init));

async function token(scope: string, server = readOnly): Promise<string> {
  const res = await call(`/service/token?service=registry-kit&scope=${encodeURIComponent(scope)}`, { headers: { authorization: basic } }, server);
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

/** The tags of `name`, read through the read-only server. */
async function tags(name: string): Promise<string[]> {
  const res = await call(`/v2/${name}/tags/list`, { headers: { authorization: `Bearer ${await token(`repository:${name}:pull`)}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { tags: string[] }).tags;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-readonly-"));
  const { config } = resolveConfig({ document: undefined, env: { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: ADMIN.password, REGISTRY_STORAGE_DELETE_ENABLED: "true" }, cwd: dir });
  writable = await createAllInOne(config, { origin: ORIGIN, storage, scrypt: FAST });
  const push = async (name: string) => {
    const auth = `Bearer ${await token(`repository:${name}:pull,push`, writable)}`;
    await pushImage((r) => writable.handler(withAuth(r, auth)), name, "v1");
  };
  await push("team/app");
  await push("team/other");
  // The same storage and keys, now in read-only maintenance.
  readOnly = await createAllInOne({ ...config, readOnly: true }, { origin: ORIGIN, storage, scrypt: FAST });
});
afterAll(async () => {
  await readOnly.close();
  await writable.close();
  await rm(dir, { recursive: true, force: true });
});

function withAuth(request: Request, authorization: string): Request {
  const headers = new Headers(request.headers);
  headers.set("authorization", authorization);
  return new Request(request, { headers });
}

async function expectReadOnlyRefusal(res: Response): Promise<void> {
  expect(res.status).toBe(405);
  const body = (await res.json()) as { errors: { code: string; message: string }[] };
  expect(body.errors[0]).toMatchObject({ code: "UNSUPPORTED", message: "the registry is in read-only mode" });
}

describe("read-only mode in the all-in-one server", () => {
  it("refuses the administrators' repository delete, forced or not, and keeps the repository", async () => {
    await expectReadOnlyRefusal(await call("/api/repositories/team/other", { method: "DELETE", headers: { authorization: basic } }));
    await expectReadOnlyRefusal(await call("/api/repositories/team/other?force=true", { method: "DELETE", headers: { authorization: basic } }));
    expect(await tags("team/other")).toEqual(["v1"]);
    // The writable server on the same storage still may.
    expect((await call("/api/repositories/team/other", { method: "DELETE", headers: { authorization: basic } }, writable)).status).toBe(200);
  });

  it("refuses the registry's writes after authorization", async () => {
    const auth = { authorization: `Bearer ${await token("repository:team/app:pull,push,delete")}` };
    await expectReadOnlyRefusal(await call("/v2/team/app/blobs/uploads/", { method: "POST", headers: auth }));
    await expectReadOnlyRefusal(await call("/v2/team/app/manifests/v1", { method: "DELETE", headers: auth }));
    expect((await call("/v2/team/app/blobs/uploads/", { method: "POST" })).status).toBe(401);
    expect(await tags("team/app")).toEqual(["v1"]);
  });

  it("refuses the web page's tag delete, which says why, and keeps the tag", async () => {
    const signIn = await call("/ui/sign-in", { method: "POST", body: new URLSearchParams({ username: ADMIN.name, password: ADMIN.password }), headers: { origin: ORIGIN } });
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const repo = await (await call("/ui/repository?name=team%2Fapp", { headers: { cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(repo)![1]!;
    const res = await call("/ui/delete-tag", { method: "POST", body: new URLSearchParams({ name: "team/app", tag: "v1", csrf }), headers: { cookie, origin: ORIGIN } });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toBe("/ui/repository?name=team%2Fapp&msg=tag-delete-failed&status=405");
    expect(await (await call(location, { headers: { cookie } })).text()).toContain("read-only mode");
    expect(await tags("team/app")).toEqual(["v1"]);
  });

  it("keeps reads, quotas and the user accounts working", async () => {
    expect((await call("/api/quotas", { headers: { authorization: basic } })).status).toBe(200);
    const created = await call("/api/users", {
      method: "POST", headers: { authorization: basic, "content-type": "application/json" },
      body: JSON.stringify({ username: "erin", email: "erin@example.test", password: "Er1nPassword" }),
    });
    expect(created.status).toBe(201);
    const auth = { authorization: `Bearer ${await token("repository:team/app:pull")}` };
    expect((await call("/v2/team/app/manifests/v1", { headers: { ...auth, accept: "application/vnd.oci.image.manifest.v1+json" } })).status).toBe(200);
  });
});
