import { describe, expect, it } from "vitest";
import { errorCode, makeRegistry, pushBlob, pushImage, req, type Handler } from "./helpers.js";

async function tagAll(registry: Handler, name: string, tags: string[]): Promise<void> {
  const image = await pushImage(registry, name, tags[0]!);
  for (const tag of tags.slice(1)) {
    const put = await registry(req("PUT", `/v2/${name}/manifests/${tag}`, { body: new TextEncoder().encode(image.manifest), headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(put.status).toBe(201);
  }
}

async function json<T>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

describe("tags/list", () => {
  const TAGS = ["v1", "latest", "v1.0", "v1-rc", "A", "_x", "v10", "v2"];
  const SORTED = [...TAGS].sort();

  it("lists all tags in lexical order", async () => {
    const registry = makeRegistry();
    await tagAll(registry, "lib/app", TAGS);
    const response = await registry(req("GET", "/v2/lib/app/tags/list"));
    expect(response.status).toBe(200);
    expect(response.headers.get("link")).toBeNull();
    expect(await json(response)).toEqual({ name: "lib/app", tags: SORTED });
  });

  it("pages with n and last, with a Link to the next page", async () => {
    const registry = makeRegistry();
    await tagAll(registry, "lib/app", TAGS);
    const seen: string[] = [];
    let path: string | null = "/v2/lib/app/tags/list?n=3";
    let pages = 0;
    while (path) {
      const response = await registry(req("GET", path));
      const body = await json<{ tags: string[] }>(response);
      expect(body.tags.length).toBeLessThanOrEqual(3);
      seen.push(...body.tags);
      const link = response.headers.get("link");
      path = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
      pages++;
    }
    expect(seen).toEqual(SORTED);
    expect(pages).toBe(3);
    const first = await registry(req("GET", "/v2/lib/app/tags/list?n=3"));
    expect(first.headers.get("link")).toBe(`</v2/lib/app/tags/list?n=3&last=${encodeURIComponent(SORTED[2]!)}>; rel="next"`);
  });

  it("starts after `last` even when `last` is not a tag", async () => {
    const registry = makeRegistry();
    await tagAll(registry, "app", ["a", "b", "c"]);
    expect((await json<{ tags: string[] }>(await registry(req("GET", "/v2/app/tags/list?last=a")))).tags).toEqual(["b", "c"]);
    expect((await json<{ tags: string[] }>(await registry(req("GET", "/v2/app/tags/list?last=bb")))).tags).toEqual(["c"]);
  });

  it("n=0 gives an empty list; n above the limit or malformed is PAGINATION_NUMBER_INVALID", async () => {
    const registry = makeRegistry({ limits: { listEntries: 5 } });
    await tagAll(registry, "app", ["a", "b"]);
    expect(await json(await registry(req("GET", "/v2/app/tags/list?n=0")))).toEqual({ name: "app", tags: [] });
    for (const n of ["6", "-1", "abc", "1e3", "99999999999999999999"]) {
      const response = await registry(req("GET", `/v2/app/tags/list?n=${n}`));
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("PAGINATION_NUMBER_INVALID");
    }
  });

  it("without n, returns at most listEntries with a Link", async () => {
    const registry = makeRegistry({ limits: { listEntries: 2 } });
    await tagAll(registry, "app", ["a", "b", "c"]);
    const response = await registry(req("GET", "/v2/app/tags/list"));
    expect((await json<{ tags: string[] }>(response)).tags).toEqual(["a", "b"]);
    expect(response.headers.get("link")).toBe('</v2/app/tags/list?n=2&last=b>; rel="next"');
  });

  it("answers NAME_UNKNOWN for an unknown repository, an empty list for one with only blobs", async () => {
    const registry = makeRegistry();
    const unknown = await registry(req("GET", "/v2/nope/tags/list"));
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe("NAME_UNKNOWN");
    await pushBlob(registry, "blobs/only", "x");
    expect(await json(await registry(req("GET", "/v2/blobs/only/tags/list")))).toEqual({ name: "blobs/only", tags: [] });
  });

  it("does not list tags of nested repositories", async () => {
    const registry = makeRegistry();
    await tagAll(registry, "a", ["parent"]);
    await tagAll(registry, "a/b", ["child"]);
    expect((await json<{ tags: string[] }>(await registry(req("GET", "/v2/a/tags/list")))).tags).toEqual(["parent"]);
  });
});

describe("_catalog", () => {
  const NAMES = ["b", "a/b", "a", "a-b", "a.b", "z/y/x", "a/a"];
  const SORTED = [...NAMES].sort();

  it("lists repositories in lexical order from the repository index", async () => {
    const registry = makeRegistry();
    for (const name of NAMES) await pushBlob(registry, name, `blob of ${name}`);
    const response = await registry(req("GET", "/v2/_catalog"));
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ repositories: SORTED });
  });

  it("pages with n and last and a Link header", async () => {
    const registry = makeRegistry();
    for (const name of NAMES) await pushImage(registry, name, "v1");
    const seen: string[] = [];
    let path: string | null = "/v2/_catalog?n=2";
    while (path) {
      const response = await registry(req("GET", path));
      seen.push(...(await json<{ repositories: string[] }>(response)).repositories);
      const link = response.headers.get("link");
      path = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
    }
    expect(seen).toEqual(SORTED);
    const first = await registry(req("GET", "/v2/_catalog?n=2"));
    expect(first.headers.get("link")).toBe(`</v2/_catalog?n=2&last=${encodeURIComponent(SORTED[1]!)}>; rel="next"`);
  });

  it("n=0 is empty, n above the limit is 400", async () => {
    const registry = makeRegistry({ limits: { listEntries: 3 } });
    await pushBlob(registry, "a", "x");
    expect(await json(await registry(req("GET", "/v2/_catalog?n=0")))).toEqual({ repositories: [] });
    const tooMany = await registry(req("GET", "/v2/_catalog?n=4"));
    expect(tooMany.status).toBe(400);
    expect(await errorCode(tooMany)).toBe("PAGINATION_NUMBER_INVALID");
  });

  it("an empty registry lists nothing", async () => {
    expect(await json(await makeRegistry()(req("GET", "/v2/_catalog")))).toEqual({ repositories: [] });
  });
});
