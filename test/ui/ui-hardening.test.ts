/**
 * The web page against a visitor who crafts its links (issue 41, items 9, 11,
 * 12), in the all-in-one server, in process: paging links never name a
 * repository the viewer may not pull, whatever `q` and cursor are asked for;
 * the notice box shows only fixed texts; signing out ends the session on the
 * server, for every process on the same storage.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEntry } from "../../src/registry/stores/base/layout.js";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { FAST } from "../users/helpers.js";

const ORIGIN = "http://registry.test:5000";
const ADMIN = { name: "admin", password: "Adm1nPassword" };
const MALLORY = { name: "mallory", password: "Mall0ryPassword" };
/** Catalog names mallory may not pull: more than one page scans (5000). */
const HIDDEN = Array.from({ length: 5200 }, (_, i) => `bob/private-${String(i).padStart(4, "0")}`);
/** Any hidden name, in the clear or URL-encoded, in a page's HTML. */
const LEAK = /bob(\/|%2F)private-\d{4}/i;

let dir: string;
let app: AllInOne;
let twin: AllInOne;
const storage = memoryStorage();

const basic = (u: { name: string; password: string }) => `Basic ${Buffer.from(`${u.name}:${u.password}`).toString("base64")}`;
const callOn = (server: AllInOne, p: string, init: RequestInit = {}) => server.handler(new Request(`${ORIGIN}${p}`, init));
const call = (p: string, init: RequestInit = {}) => callOn(app, p, init);
const csrfOf = (text: string) => /name="csrf" value="([^"]+)"/.exec(text)![1]!;

async function signIn(user: { name: string; password: string }): Promise<string> {
  const res = await call("/ui/sign-in", { method: "POST", body: new URLSearchParams({ username: user.name, password: user.password }), headers: { origin: ORIGIN } });
  expect(res.status).toBe(303);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}
const page = async (cookie: string, p: string, server = app) => {
  const res = await callOn(server, p, { headers: { cookie } });
  return { status: res.status, text: await res.text() };
};
/** The href of the "Next page" link, decoded from its HTML attribute. */
const nextLink = (text: string) => /<a href="([^"]+)">Next page<\/a>/.exec(text)?.[1]?.replaceAll("&amp;", "&");

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-ui-hard-"));
  const { config } = resolveConfig({ document: undefined, env: { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: ADMIN.password, REGISTRY_STORAGE_DELETE_ENABLED: "true" }, cwd: dir });
  app = await createAllInOne(config, { origin: ORIGIN, storage, scrypt: FAST });
  // A second process on the same storage and key directory (a scaled-out deployment).
  twin = await createAllInOne(config, { origin: ORIGIN, storage, scrypt: FAST });
  const created = await call("/api/users", {
    method: "POST", headers: { authorization: basic(ADMIN), "content-type": "application/json" },
    body: JSON.stringify({ username: MALLORY.name, email: "mallory@example.test", password: MALLORY.password }),
  });
  expect(created.status).toBe(201);
  // Catalog markers only: the page reads the catalog and asks the policy, nothing more.
  for (const name of ["alice/hidden", ...HIDDEN, "mallory/app", "mallory/tools"]) await storage.write(catalogEntry(name), new Uint8Array(0));
});
afterAll(async () => {
  await twin.close();
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the repositories page's paging (item 9)", () => {
  it("walks past a stretch of other users' repositories without any link naming one", async () => {
    const mallory = await signIn(MALLORY);
    const seen: string[] = [];
    let link: string | undefined = "/ui/";
    for (let i = 0; link && i < 5; i++) {
      const res = await page(mallory, link);
      expect(res.status, link).toBe(200);
      expect(res.text, link).not.toMatch(LEAK);
      seen.push(...[...res.text.matchAll(/>(mallory\/[a-z]+)<\/a>/g)].map((m) => m[1]!));
      link = nextLink(res.text);
    }
    // The walk still reaches the names after the hidden stretch.
    expect(seen).toEqual(["mallory/app", "mallory/tools"]);
  });

  it("never shows a hidden name for chosen q, last and cursor values", async () => {
    const mallory = await signIn(MALLORY);
    for (const query of ["?q=ivate-", "?q=a", "?last=alice%2Fhidden", "?last=bob%2Fprivate-0001&q=ivate-49", "?q=ivate-&last=bob%2Fprivate-4999"]) {
      const res = await page(mallory, `/ui/${query}`);
      expect(res.status, query).toBe(200);
      expect(res.text, query).not.toMatch(LEAK);
      const next = nextLink(res.text);
      if (next) expect((await page(mallory, next)).text, `${query} → ${next}`).not.toMatch(LEAK);
    }
  });

  it("refuses a cursor it did not make with 400", async () => {
    const mallory = await signIn(MALLORY);
    const first = nextLink((await page(mallory, "/ui/")).text)!;
    const cursor = new URL(first, ORIGIN).searchParams.get("after")!;
    const changed = (cursor.startsWith("A") ? "B" : "A") + cursor.slice(1);
    for (const after of ["bob%2Fprivate-0001", encodeURIComponent(changed), "%00", "x".repeat(2000)]) {
      const res = await page(mallory, `/ui/?after=${after}`);
      expect(res.status, after).toBe(400);
      expect(res.text).not.toMatch(LEAK);
    }
  });
});

describe("the notice box (item 11)", () => {
  const PHISH = "Your session expired: sign in at evil.example";

  it("shows no text taken from the link, on any page", async () => {
    const mallory = await signIn(MALLORY);
    const query = `?msg=${encodeURIComponent(PHISH)}&err=1`;
    for (const [cookie, p] of [["", "/ui/sign-in"], [mallory, "/ui/"], [mallory, "/ui/repository?name=mallory%2Fapp"], [mallory, "/ui/nowhere"]] as const) {
      const res = await page(cookie, `${p}${query}`);
      expect(res.text, p).not.toContain("evil.example");
      expect(res.text, p).not.toContain('class="notice');
    }
    // A known code with a status that is not one shows the fixed text alone.
    const odd = await page(mallory, `/ui/?msg=tag-delete-failed&status=${encodeURIComponent(PHISH)}`);
    expect(odd.text).toContain('<div class="notice error" role="status">Deleting the tag failed.</div>');
    expect(odd.text).not.toContain("evil.example");
  });

  it("shows the fixed text of a known code, with the reason for a status", async () => {
    const signedOut = await page("", "/ui/sign-in?msg=signed-out");
    expect(signedOut.text).toContain('<div class="notice" role="status">Signed out.</div>');
    const mallory = await signIn(MALLORY);
    const refused = await page(mallory, "/ui/?msg=tag-delete-failed&status=405");
    expect(refused.text).toContain("Deleting the tag failed: the registry does not allow it now (read-only mode, or deletes are off).");
  });

  it("an action's redirect carries a code and a status, never the service's words", async () => {
    const mallory = await signIn(MALLORY);
    const csrf = csrfOf((await page(mallory, "/ui/")).text);
    const res = await call("/ui/delete-tag", { method: "POST", body: new URLSearchParams({ name: "bob/private-0001", tag: "v1", csrf }), headers: { cookie: mallory, origin: ORIGIN } });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location")!, ORIGIN);
    expect([...location.searchParams.keys()].sort()).toEqual(["msg", "name", "status"]);
    expect(location.searchParams.get("msg")).toBe("tag-delete-failed");
    expect(location.searchParams.get("status")).toBe("401");
  });
});

describe("signing out (item 12)", () => {
  it("ends the session on the server: a copy of the cookie stops working at once, in every process on the storage", async () => {
    const mallory = await signIn(MALLORY);
    const copy = mallory;
    expect((await page(copy, "/ui/")).status).toBe(200);
    expect((await page(copy, "/ui/", twin)).status).toBe(200);
    const csrf = csrfOf((await page(mallory, "/ui/")).text);
    const out = await call("/ui/sign-out", { method: "POST", body: new URLSearchParams({ csrf }), headers: { cookie: mallory, origin: ORIGIN } });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/ui/sign-in?msg=signed-out");
    expect(out.headers.get("set-cookie")).toMatch(/^rk_ui_session=; .*Max-Age=0/);
    const here = await page(copy, "/ui/");
    expect(here.status).toBe(303);
    expect((await page(copy, "/ui/", twin)).status).toBe(303);
    // Its forms are dead too.
    const post = await call("/ui/users/create", { method: "POST", body: new URLSearchParams({ csrf, username: "x" }), headers: { cookie: copy, origin: ORIGIN } });
    expect(post.status).toBe(403);
  });

  it("leaves the user's other sessions alone", async () => {
    const one = await signIn(MALLORY);
    const other = await signIn(MALLORY);
    const csrf = csrfOf((await page(one, "/ui/")).text);
    expect((await call("/ui/sign-out", { method: "POST", body: new URLSearchParams({ csrf }), headers: { cookie: one, origin: ORIGIN } })).status).toBe(303);
    expect((await page(one, "/ui/")).status).toBe(303);
    expect((await page(other, "/ui/")).status).toBe(200);
  });
});
