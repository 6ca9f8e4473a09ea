/**
 * `createRegistry({ basePath })` (Distribution's `http.prefix`): the API answers
 * under the base path only, and every URL it hands out (`Location` of uploads,
 * blobs and manifests, `Link` of tags and catalog pages, the URL of each event)
 * starts with it.
 */
import { describe, expect, it } from "vitest";
import { createMetrics, createRegistry } from "../../src/registry/index.js";
import type { RegistryEvent } from "../../src/events/index.js";
import { normalizeBasePath, underBase } from "../../src/registry/router.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { valueOf } from "../util/prometheus-parse.js";
import { BASE, bytes, errorCode, imageManifest, req, sha256, type Handler } from "./helpers.js";

const P = "/my/reg";

function mounted(options: { basePath?: string; events?: RegistryEvent[] } = {}) {
  const metrics = createMetrics();
  const registry = createRegistry({
    storage: memoryStorage(),
    uploadSecret: "s",
    basePath: options.basePath ?? P,
    metrics,
    // A sink gets its events after the response, in order (issue 41, item 7): the test waits for them.
    ...(options.events ? { onEvent: { record: async (e: RegistryEvent) => void options.events!.push(e) } } : {}),
  });
  return { registry, metrics };
}

/** The `Location` of `response`, checked to be absolute on BASE and under `P/v2/`; returned as a URL. */
function locationUnderBase(response: Response): URL {
  const location = response.headers.get("location");
  expect(location, `status ${response.status}`).not.toBeNull();
  const url = new URL(location!);
  expect(url.origin).toBe(BASE);
  expect(url.pathname.startsWith(`${P}/v2/`)).toBe(true);
  return url;
}

async function pushBlobUnder(registry: Handler, name: string, text: string): Promise<string> {
  const digest = sha256(text);
  const start = await registry(req("POST", `${P}/v2/${name}/blobs/uploads/`));
  const location = locationUnderBase(start);
  location.searchParams.set("digest", digest);
  const put = await registry(req("PUT", location.href, { body: bytes(text), headers: { "content-type": "application/octet-stream" } }));
  expect(put.status).toBe(201);
  return digest;
}

describe("createRegistry({ basePath })", () => {
  it("answers the ping under the base path and 404 outside it", async () => {
    const { registry } = mounted();
    expect((await registry(req("GET", `${P}/v2/`))).status).toBe(200);
    expect((await registry(req("GET", `${P}/v2`))).status).toBe(200);
    for (const outside of ["/v2/", "/my/v2/", "/my/regx/v2/", "/my/reg", "/my/reg/", "/my/reg/v3/", "/other/my/reg/v2/"]) {
      const res = await registry(req("GET", outside));
      expect(res.status, outside).toBe(404);
      expect(await errorCode(res)).toBe("UNSUPPORTED");
    }
  });

  it("puts every upload Location under it: POST, PATCH, GET status, PUT, monolithic POST, mount", async () => {
    const { registry } = mounted();
    const start = await registry(req("POST", `${P}/v2/team/app/blobs/uploads/`));
    expect(start.status).toBe(202);
    const session = locationUnderBase(start);
    expect(session.pathname).toMatch(new RegExp(`^${P}/v2/team/app/blobs/uploads/[0-9a-f-]{36}$`));

    const patch = await registry(req("PATCH", session.href, { body: bytes("abc"), headers: { "content-type": "application/octet-stream" } }));
    expect(patch.status).toBe(202);
    const afterPatch = locationUnderBase(patch);

    const status = await registry(req("GET", afterPatch.href));
    expect(status.status).toBe(204);
    const afterStatus = locationUnderBase(status);

    afterStatus.searchParams.set("digest", sha256("abcdef"));
    const put = await registry(req("PUT", afterStatus.href, { body: bytes("def"), headers: { "content-type": "application/octet-stream" } }));
    expect(put.status).toBe(201);
    expect(locationUnderBase(put).pathname).toBe(`${P}/v2/team/app/blobs/${sha256("abcdef")}`);

    const whole = await registry(req("POST", `${P}/v2/team/app/blobs/uploads/?digest=${sha256("xyz")}`, { body: bytes("xyz") }));
    expect(whole.status).toBe(201);
    expect(locationUnderBase(whole).pathname).toBe(`${P}/v2/team/app/blobs/${sha256("xyz")}`);

    const mount = await registry(req("POST", `${P}/v2/team/other/blobs/uploads/?mount=${sha256("xyz")}&from=team/app`));
    expect(mount.status).toBe(201);
    expect(locationUnderBase(mount).pathname).toBe(`${P}/v2/team/other/blobs/${sha256("xyz")}`);

    const blob = await registry(req("GET", `${P}/v2/team/other/blobs/${sha256("xyz")}`));
    expect(await blob.text()).toBe("xyz");
  });

  it("puts the manifest PUT's Location and the tags and catalog Links under it", async () => {
    const { registry } = mounted();
    const config = await pushBlobUnder(registry, "team/app", "{}");
    const layer = await pushBlobUnder(registry, "team/app", "layer");
    const manifest = imageManifest(config, 2, [{ digest: layer, size: 5 }]);
    for (const tag of ["a", "b"]) {
      const put = await registry(req("PUT", `${P}/v2/team/app/manifests/${tag}`, { body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
      expect(put.status).toBe(201);
      expect(locationUnderBase(put).pathname).toBe(`${P}/v2/team/app/manifests/${sha256(manifest)}`);
    }
    await pushBlobUnder(registry, "team/zzz", "z");
    const zzz = await registry(req("PUT", `${P}/v2/team/zzz/manifests/z`, { body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(zzz.status).toBe(400); // its blobs are not in team/zzz; the catalog still lists it (it has an upload's link)

    const tags = await registry(req("GET", `${P}/v2/team/app/tags/list?n=1`));
    expect(tags.headers.get("link")).toBe(`<${P}/v2/team/app/tags/list?n=1&last=a>; rel="next"`);
    const catalog = await registry(req("GET", `${P}/v2/_catalog?n=1`));
    expect(catalog.headers.get("link")).toBe(`<${P}/v2/_catalog?n=1&last=team%2Fapp>; rel="next"`);
    // Following the Link (relative to the request, as clients do) stays under the base path.
    const next = await registry(req("GET", new URL(`${P}/v2/team/app/tags/list?n=1&last=a`, BASE).href));
    expect(await next.json()).toEqual({ name: "team/app", tags: ["b"] });
  });

  it("gives each event's target URL the base path", async () => {
    const events: RegistryEvent[] = [];
    const { registry } = mounted({ events });
    const config = await pushBlobUnder(registry, "team/app", "{}");
    const manifest = imageManifest(config, 2, []);
    await registry(req("PUT", `${P}/v2/team/app/manifests/v1`, { body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    await registry(req("GET", `${P}/v2/team/app/manifests/v1`));
    for (let i = 0; i < 1000 && !events.some((e) => e.action === "pull"); i++) await new Promise((r) => setTimeout(r, 5));
    const urls = events.flatMap((e) => (e.target.url ? [`${e.action} ${e.target.url}`] : []));
    expect(urls).toEqual([
      `push ${BASE}${P}/v2/team/app/blobs/${config}`,
      `push ${BASE}${P}/v2/team/app/manifests/${sha256(manifest)}`,
      `pull ${BASE}${P}/v2/team/app/manifests/${sha256(manifest)}`,
    ]);
  });

  it("labels its metrics by route under the base path, and 'other' outside it", async () => {
    const { registry, metrics } = mounted();
    await registry(req("GET", `${P}/v2/`));
    await registry(req("GET", `${P}/v2/team/app/tags/list`));
    await registry(req("GET", "/v2/"));
    const text = metrics.render();
    expect(valueOf(text, "registry_http_requests_total", { handler: "base", method: "get", code: "200" })).toBe(1);
    expect(valueOf(text, "registry_http_requests_total", { handler: "tags", method: "get", code: "404" })).toBe(1);
    expect(valueOf(text, "registry_http_requests_total", { handler: "other", method: "get", code: "404" })).toBe(1);
  });

  it("treats '/' and trailing slashes as Distribution's '/prefix/' form", async () => {
    const root = mounted({ basePath: "/" }).registry;
    expect((await root(req("GET", "/v2/"))).status).toBe(200);
    const slashed = mounted({ basePath: `${P}/` }).registry;
    expect((await slashed(req("GET", `${P}/v2/`))).status).toBe(200);
    expect(normalizeBasePath(undefined)).toBe("");
    expect(normalizeBasePath("/")).toBe("");
    expect(normalizeBasePath("")).toBe("");
    expect(normalizeBasePath("/a/b//")).toBe("/a/b");
    expect(normalizeBasePath("/a:b/c@d")).toBe("/a:b/c@d");
  });

  it.each(["my/reg/", "reg", "/a b/", "/a//b", "/a/../b", "/./a", "/a?b", "/a#b", "/a%20b", "/ä"])("refuses basePath %j with a TypeError naming it", (value) => {
    expect(() => createRegistry({ storage: memoryStorage(), uploadSecret: "s", basePath: value })).toThrow(TypeError);
    expect(() => normalizeBasePath(value)).toThrow(JSON.stringify(value));
  });

  it("underBase keeps only paths under the base, at a segment boundary", () => {
    expect(underBase("/my/reg/v2/", P)).toBe("/v2/");
    expect(underBase("/my/regv2/", P)).toBeUndefined();
    expect(underBase("/my/reg", P)).toBeUndefined();
    expect(underBase("/v2/", "")).toBe("/v2/");
  });
});
