import { describe, expect, it } from "vitest";
import type { Access, Authorizer } from "../../src/auth/access.js";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { errorCode, expectApiVersion, req, sha256 } from "./helpers.js";

/** A registry whose authorizer and storage record every call, to prove junk reaches neither. */
function guarded(options: { deleteEnabled?: boolean } = {}) {
  const authCalls: Access[][] = [];
  const storageCalls: string[] = [];
  const storage = memoryStorage();
  const recording = new Proxy(storage, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        storageCalls.push(String(prop));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as StorageDriver;
  const authorize: Authorizer = async (_request, needed) => {
    authCalls.push(needed);
    return undefined;
  };
  const registry = createRegistry({ storage: recording, authorize, uploadSecret: "s", ...options });
  return { registry, authCalls, storageCalls };
}

const DIGEST = sha256("x");

describe("invalid names", () => {
  const names = [
    "UPPER/case",
    "Upper",
    "a..b",
    "a%2e%2eb",
    "foo%2E%2E",
    "%2e%2e%2fetc",
    "a%00b",
    "a\u0000b",
    "-leading",
    "trailing-",
    "a//b",
    "a/",
    "a___b",
    "a:b",
    "a b",
    "é",
    "x".repeat(256),
    `${"a/".repeat(127)}ab`,
  ];

  it.each(names)("refuses %j with NAME_INVALID before auth and storage", async (name) => {
    const { registry, authCalls, storageCalls } = guarded();
    for (const path of [`/v2/${name}/manifests/latest`, `/v2/${name}/blobs/${DIGEST}`, `/v2/${name}/tags/list`, `/v2/${name}/blobs/uploads/`]) {
      const method = path.endsWith("uploads/") ? "POST" : "GET";
      const response = await registry(req(method, path));
      expect(response.status).toBe(400);
      expectApiVersion(response);
      expect(await errorCode(response)).toBe("NAME_INVALID");
    }
    expect(authCalls).toEqual([]);
    expect(storageCalls).toEqual([]);
  });

  it("accepts the grammar's separators and nested names up to 255 characters", async () => {
    const { registry } = guarded();
    for (const name of ["a", "a.b", "a_b", "a__b", "a---b", "0/1/2", `${"a/".repeat(126)}abc`]) {
      const response = await registry(req("GET", `/v2/${name}/manifests/latest`));
      expect(response.status).toBe(404); // valid name, unknown manifest
      expect(await errorCode(response)).toBe("MANIFEST_UNKNOWN");
    }
  });

  it("dot segments are resolved by URL parsing and never reach a key", async () => {
    const { registry, storageCalls } = guarded();
    const response = await registry(req("GET", "/v2/../../etc/passwd"));
    expect(response.status).toBe(404);
    const dots = await registry(req("GET", "/v2/%2e%2e/manifests/x"));
    expect(dots.status).toBe(404);
    // `/v2/r/manifests/%2e%2e` is `/v2/r/` after parsing: no route
    expect((await registry(req("GET", "/v2/r/manifests/%2e%2e"))).status).toBe(404);
    expect(storageCalls).toEqual([]);
  });
});

describe("invalid digests", () => {
  const digests = [
    "sha256:" + "A".repeat(64),
    "sha256:" + "a".repeat(63),
    "sha256:" + "a".repeat(65),
    "sha512:" + "a".repeat(64),
    "md5:d41d8cd98f00b204e9800998ecf8427e",
    "sha256",
    "sha256:",
    ":abc",
    "sha256:../../x",
    "sha256%3Aabc",
  ];

  it.each(digests)("refuses blob digest %j with DIGEST_INVALID before auth and storage", async (digest) => {
    const { registry, authCalls, storageCalls } = guarded();
    for (const path of [`/v2/r/blobs/${digest}`, `/v2/r/referrers/${digest}`]) {
      const response = await registry(req("GET", path));
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("DIGEST_INVALID");
    }
    expect(authCalls).toEqual([]);
    expect(storageCalls).toEqual([]);
  });

  it("refuses a malformed manifest digest reference", async () => {
    const { registry, authCalls } = guarded();
    const response = await registry(req("GET", "/v2/r/manifests/sha256:abc"));
    expect(await errorCode(response)).toBe("DIGEST_INVALID");
    expect(authCalls).toEqual([]);
  });
});

describe("invalid tags", () => {
  const invalid = [".hidden", "-dash", "x".repeat(129), "a%2Fb", "a%00", "t@g"];

  it.each(invalid)("refuses PUT of %j with 400 TAG_INVALID after auth, without touching storage", async (tag) => {
    const { registry, authCalls, storageCalls } = guarded();
    const response = await registry(req("PUT", `/v2/r/manifests/${tag}`, { body: "{}", headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } }));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("TAG_INVALID");
    expect(authCalls).toEqual([[{ type: "repository", name: "r", actions: ["pull", "push"] }]]);
    expect(storageCalls).toEqual([]);
  });

  // distribution-spec: GET and HEAD of a manifest fail only with 404; such a tag names nothing that could exist.
  it.each(invalid)("answers GET, HEAD and DELETE of %j with 404 MANIFEST_UNKNOWN after auth, without touching storage", async (tag) => {
    const { registry, authCalls, storageCalls } = guarded({ deleteEnabled: true });
    for (const method of ["GET", "HEAD", "DELETE"]) {
      const response = await registry(req(method, `/v2/r/manifests/${tag}`));
      expect(response.status, method).toBe(404);
      if (method !== "HEAD") expect(await errorCode(response)).toBe("MANIFEST_UNKNOWN");
    }
    const access = (action: string): Access[] => [{ type: "repository", name: "r", actions: [action] }];
    expect(authCalls).toEqual([access("pull"), access("pull"), access("delete")]);
    expect(storageCalls).toEqual([]);
  });

  it("answers DELETE of an invalid tag with 405 when deletion is disabled, like any other reference", async () => {
    const { registry } = guarded();
    const response = await registry(req("DELETE", "/v2/r/manifests/.hidden"));
    expect(response.status).toBe(405);
    expect(await errorCode(response)).toBe("UNSUPPORTED");
  });

  it("accepts a 128-character tag and mixed case", async () => {
    const { registry } = guarded();
    for (const tag of ["x".repeat(128), "Latest_1.0-rc"]) {
      expect(await errorCode(await registry(req("GET", `/v2/r/manifests/${tag}`)))).toBe("MANIFEST_UNKNOWN");
    }
  });
});

describe("routes and methods", () => {
  it("answers 405 with Allow and UNSUPPORTED for a wrong method, before auth", async () => {
    const { registry, authCalls } = guarded();
    const cases: [string, string, string][] = [
      ["POST", "/v2/", "GET, HEAD"],
      ["PUT", `/v2/r/blobs/${DIGEST}`, "GET, HEAD, DELETE"],
      ["PATCH", "/v2/r/manifests/latest", "GET, HEAD, PUT, DELETE"],
      ["GET", "/v2/r/blobs/uploads/", "POST"],
      ["DELETE", "/v2/r/tags/list", "GET, HEAD"],
      ["POST", "/v2/_catalog", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const response = await registry(req(method, path));
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe(allow);
      expect(await errorCode(response)).toBe("UNSUPPORTED");
      expectApiVersion(response);
    }
    expect(authCalls).toEqual([]);
  });

  it("answers 404 UNSUPPORTED for unknown paths under /v2/, before auth", async () => {
    const { registry, authCalls } = guarded();
    for (const path of ["/v2/r", "/v2/r/unknown/x", "/v2/r/tags/list/extra", "/v2/_catalog/x"]) {
      const response = await registry(req("GET", path));
      expect(response.status, path).toBe(404);
      expectApiVersion(response);
      expect(await errorCode(response), path).toBe("UNSUPPORTED");
    }
    expect(authCalls).toEqual([]);
  });

  it("accepts lower-case method names", async () => {
    const { registry } = guarded();
    const start = await registry(req("POST", "/v2/r/blobs/uploads/"));
    const patch = await registry(req("patch", start.headers.get("location")!, { body: new Uint8Array([1, 2]) }));
    expect(patch.status).toBe(202);
  });
});
