import { describe, expect, it } from "vitest";
import type { Access, Authorizer } from "../../src/auth/access.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { bytes, pushBlob, pushImage, req, sha256 } from "./helpers.js";

function recording() {
  const calls: { method: string; path: string; needed: Access[] }[] = [];
  const authorize: Authorizer = async (request, needed) => {
    calls.push({ method: request.method, path: new URL(request.url).pathname, needed: structuredClone(needed) });
    return undefined;
  };
  const registry = createRegistry({ storage: memoryStorage(), authorize, uploadSecret: "s", deleteEnabled: true });
  return { registry, calls };
}

const pull = (name: string): Access => ({ type: "repository", name, actions: ["pull"] });
const pullPush = (name: string): Access => ({ type: "repository", name, actions: ["pull", "push"] });
const del = (name: string): Access => ({ type: "repository", name, actions: ["delete"] });

describe("authorize receives exactly the access each route needs", () => {
  it("for every route", async () => {
    const { registry, calls } = recording();
    const name = "team/app";
    const image = await pushImage(registry, name, "v1");
    const blob = await pushBlob(registry, "other/src", "mountable");
    calls.length = 0;

    const last = () => calls[calls.length - 1]!.needed;
    await registry(req("GET", "/v2/"));
    expect(last()).toEqual([]);
    await registry(req("GET", "/v2/_catalog"));
    expect(last()).toEqual([{ type: "registry", name: "catalog", actions: ["*"] }]);
    for (const method of ["GET", "HEAD"]) {
      await registry(req(method, `/v2/${name}/manifests/v1`));
      expect(last()).toEqual([pull(name)]);
      await registry(req(method, `/v2/${name}/blobs/${image.layer}`));
      expect(last()).toEqual([pull(name)]);
    }
    await registry(req("GET", `/v2/${name}/tags/list`));
    expect(last()).toEqual([pull(name)]);
    await registry(req("GET", `/v2/${name}/referrers/${image.digest}`));
    expect(last()).toEqual([pull(name)]);

    const start = await registry(req("POST", `/v2/${name}/blobs/uploads/`));
    expect(last()).toEqual([pullPush(name)]);
    const location = start.headers.get("location")!;
    const patch = await registry(req("PATCH", location, { body: bytes("abc") }));
    expect(last()).toEqual([pullPush(name)]);
    await registry(req("GET", patch.headers.get("location")!));
    expect(last()).toEqual([pull(name)]);
    await registry(req("PUT", `${patch.headers.get("location")!}&digest=${sha256("abc")}`));
    expect(last()).toEqual([pullPush(name)]);
    const second = await registry(req("POST", `/v2/${name}/blobs/uploads`));
    await registry(req("DELETE", second.headers.get("location")!));
    expect(last()).toEqual([pullPush(name)]);

    await registry(req("POST", `/v2/${name}/blobs/uploads/?mount=${blob}&from=other/src`));
    expect(last()).toEqual([pullPush(name), pull("other/src")]);
    await registry(req("POST", `/v2/${name}/blobs/uploads/?mount=${blob}`));
    expect(last()).toEqual([pullPush(name)]);

    await registry(req("PUT", `/v2/${name}/manifests/v2`, { body: bytes(image.manifest), headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(last()).toEqual([pullPush(name)]);
    await registry(req("DELETE", `/v2/${name}/manifests/v2`));
    expect(last()).toEqual([del(name)]);
    await registry(req("DELETE", `/v2/${name}/blobs/${image.layer}`));
    expect(last()).toEqual([del(name)]);
    // each request was authorized exactly once
    expect(calls).toHaveLength(19);
  });

  it("returns the authorizer's Response unchanged and does nothing else", async () => {
    const storage = memoryStorage();
    const challenge = new Response('{"errors":[{"code":"UNAUTHORIZED"}]}', { status: 401, headers: { "www-authenticate": 'Bearer realm="http://auth.test/token",service="reg"', "x-custom": "kept" } });
    const deny: Authorizer = async () => challenge;
    const registry = createRegistry({ storage, authorize: deny, uploadSecret: "s" });
    const response = await registry(req("POST", "/v2/r/blobs/uploads/"));
    expect(response).toBe(challenge);
    expect((await storage.list("repositories")).keys).toEqual([]);
  });

  it("the DELETE-disabled answer comes after authorization", async () => {
    const { calls } = recording();
    const seen: Access[][] = [];
    const registry = createRegistry({ storage: memoryStorage(), uploadSecret: "s", authorize: async (_r, needed) => void seen.push(needed) });
    const response = await registry(req("DELETE", `/v2/r/manifests/${sha256("x")}`));
    expect(response.status).toBe(405);
    expect(seen).toEqual([[del("r")]]);
    expect(calls).toEqual([]);
  });
});
