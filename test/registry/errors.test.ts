import { describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/http/log.js";
import { errorResponse } from "../../src/oci/errors.js";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { errorCode, expectApiVersion, pushBlob, req, sha256 } from "./helpers.js";

describe("unexpected failures", () => {
  it("answer 500 UNKNOWN with a generic body and log the error", async () => {
    const events: LogEvent[] = [];
    const inner = memoryStorage();
    const broken: StorageDriver = { ...inner, stat: async () => { throw new Error("disk on fire at /secret/path"); } };
    const registry = createRegistry({ storage: broken, uploadSecret: "s", log: (e) => events.push(e) });
    const response = await registry(req("HEAD", `/v2/r/blobs/${sha256("x")}`));
    expect(response.status).toBe(500);
    expectApiVersion(response);
    const get = await registry(req("GET", `/v2/r/manifests/${sha256("x")}`));
    const text = JSON.stringify(await get.json());
    expect(text).not.toContain("disk on fire");
    expect(text).not.toContain("at ");
    expect(text).toContain("UNKNOWN");
    const errors = events.filter((e) => e.level === "error");
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]!.path).toBe(`/v2/r/blobs/${sha256("x")}`);
    expect(String(errors[0]!.error)).toContain("disk on fire");
  });

  it("a driver failure during upload is a 500, not a 4xx", async () => {
    const inner = memoryStorage();
    const broken: StorageDriver = { ...inner, append: async () => { throw new Error("io"); } };
    const registry = createRegistry({ storage: broken, uploadSecret: "s" });
    const start = await registry(req("POST", "/v2/r/blobs/uploads/"));
    const patch = await registry(req("PATCH", start.headers.get("location")!, { body: new Uint8Array([1]) }));
    expect(patch.status).toBe(500);
  });
});

describe("configuration", () => {
  it("warns when no uploadSecret is given, and still works", async () => {
    const events: LogEvent[] = [];
    const registry = createRegistry({ storage: memoryStorage(), log: (e) => events.push(e) });
    expect(events.some((e) => e.level === "warn" && /uploadSecret/.test(e.msg))).toBe(true);
    expect(await pushBlob(registry, "r", "works")).toBe(sha256("works"));
  });

  it("does not warn with a secret, and refuses an empty one", () => {
    const events: LogEvent[] = [];
    createRegistry({ storage: memoryStorage(), uploadSecret: new Uint8Array(32).fill(1), log: (e) => events.push(e) });
    expect(events).toEqual([]);
    expect(() => createRegistry({ storage: memoryStorage(), uploadSecret: "" })).toThrow(TypeError);
  });

  it("every error response carries the API version headers and the OCI body", async () => {
    const registry = createRegistry({ storage: memoryStorage(), uploadSecret: "s" });
    const cases = [
      ["GET", "/nope", 404, "UNSUPPORTED"],
      ["GET", "/v2/Bad/tags/list", 400, "NAME_INVALID"],
      ["GET", "/v2/r/blobs/sha256:1", 400, "DIGEST_INVALID"],
      ["GET", "/v2/r/tags/list", 404, "NAME_UNKNOWN"],
      ["DELETE", "/v2/r/blobs/uploads/00000000-0000-0000-0000-000000000000", 400, "BLOB_UPLOAD_INVALID"],
    ] as const;
    for (const [method, path, status, code] of cases) {
      const response = await registry(req(method, path));
      expect(response.status, `${method} ${path}`).toBe(status);
      expectApiVersion(response);
      expect(response.headers.get("content-type")).toContain("application/json");
      expect(await errorCode(response), `${method} ${path}`).toBe(code);
    }
  });
});

describe("errors answering HEAD", () => {
  // RFC 9110 §9.3.2: no content in a HEAD response; the headers stay those of the GET's answer.
  it("carry no body, but the status, error Content-Type and Content-Length of the GET's answer", async () => {
    const registry = createRegistry({ storage: memoryStorage(), uploadSecret: "s" });
    const cases = [
      [`/v2/r/blobs/${sha256("absent")}`, 404],
      [`/v2/r/manifests/absent`, 404],
      [`/v2/r/manifests/.invalid`, 404],
      [`/v2/r/manifests/sha256:short`, 400],
      ["/v2/r/tags/list", 404],
      ["/v2/r/nothing-here", 404],
    ] as const;
    for (const [path, status] of cases) {
      const get = await registry(req("GET", path));
      const head = await registry(req("HEAD", path));
      expect(get.status, path).toBe(status);
      expect(head.status, path).toBe(status);
      expect(head.body, path).toBeNull();
      expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"));
      expect(head.headers.get("content-length"), path).toBe(get.headers.get("content-length"));
      expectApiVersion(head);
    }
  });

  it("a 500 answering HEAD carries no body either", async () => {
    const broken: StorageDriver = { ...memoryStorage(), stat: async () => { throw new Error("io"); } };
    const registry = createRegistry({ storage: broken, uploadSecret: "s" });
    const head = await registry(req("HEAD", `/v2/r/blobs/${sha256("x")}`));
    expect(head.status).toBe(500);
    expect(head.body).toBeNull();
  });
});

describe("error response headers", () => {
  it("one line per header: extra headers cannot repeat or replace the type, length and API version", async () => {
    const response = errorResponse("UNSUPPORTED", "nope", {
      status: 405,
      headers: [["Allow", "GET"], ["content-type", "text/plain"], ["Docker-Distribution-Api-Version", "registry/9"], ["Content-Length", "1"]],
    });
    const body = await response.text();
    expect(response.headers.get("allow")).toBe("GET");
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("docker-distribution-api-version")).toBe("registry/2.0");
    expect(response.headers.get("content-length")).toBe(String(new TextEncoder().encode(body).byteLength));
    expect([...response.headers.keys()].sort()).toEqual(
      ["allow", "container-distribution-api-version", "content-length", "content-type", "docker-distribution-api-version", "x-content-type-options"],
    );
    for (const init of [new Headers({ Range: "0-1" }), { Range: "0-1" }]) {
      expect(errorResponse("RANGE_INVALID", "bad", { headers: init }).headers.get("range")).toBe("0-1");
    }
  });
});
