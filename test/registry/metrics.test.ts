import { describe, expect, it } from "vitest";
import { createTokenService, hmacKeys, memoryCredentials } from "../../src/auth/index.js";
import {
  createHealthChecks,
  createMetrics,
  createRegistry,
  healthGate,
  healthStatusHandler,
  instrumentHandler,
  metricsHandler,
  PROMETHEUS_CONTENT_TYPE,
  storageHealthCheck,
} from "../../src/registry/index.js";
import { registryRouteLabel } from "../../src/registry/metrics.js";
import { inMemoryResponse, markInMemoryReader, takeInMemoryBody } from "../../src/http/in-memory-response.js";
import { instrumentStorage, StorageError, type StorageDriver } from "../../src/storage/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { valueOf } from "../util/prometheus-parse.js";
import { BASE, bytes, pushImage, req } from "./helpers.js";

describe("registryRouteLabel", () => {
  it.each([
    ["/v2/", "base"],
    ["/v2", "base"],
    ["/v2/_catalog", "catalog"],
    ["/v2/a/b/tags/list", "tags"],
    ["/v2/a/manifests/latest", "manifest"],
    ["/v2/manifests/manifests/sha256:ab", "manifest"],
    ["/v2/a/blobs/sha256:ab", "blob"],
    ["/v2/a/blobs/uploads/", "blob_upload"],
    ["/v2/a/blobs/uploads", "blob_upload"],
    ["/v2/a/blobs/uploads/0f0e5c55-0000-4000-8000-000000000000", "blob_upload_chunk"],
    ["/v2/uploads/blobs/x", "blob"],
    ["/v2/a/referrers/sha256:ab", "referrers"],
    ["/v2/a/nothing/here", "other"],
    ["/v1/_ping", "other"],
  ])("%s is %s", (path, label) => {
    expect(registryRouteLabel(path)).toBe(label);
  });
});

describe("registry metrics over a push and a pull", () => {
  it("counts requests by route, method and status, sizes, and storage actions", async () => {
    const metrics = createMetrics();
    const storage = instrumentStorage(memoryStorage(), metrics);
    const registry = createRegistry({ storage, uploadSecret: "s".repeat(32), metrics });
    const image = await pushImage(registry, "team/app", "v1");
    // As an adapter passes it: with Content-Length (a Request made here has none of its own).
    const length = bytes(image.manifest).byteLength;
    const tagged = await registry(req("PUT", "/v2/team/app/manifests/v2", {
      body: image.manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json", "content-length": String(length) },
    }));
    expect(tagged.status).toBe(201);
    const manifest = await registry(req("GET", "/v2/team/app/manifests/v1", { headers: { accept: "application/vnd.oci.image.manifest.v1+json" } }));
    expect(manifest.status).toBe(200);
    await manifest.arrayBuffer();
    const blob = await registry(req("GET", `/v2/team/app/blobs/${image.layer}`));
    expect(await blob.text()).toBe("layer-bytes-x");
    expect((await registry(req("HEAD", `/v2/team/app/blobs/${image.layer}`))).status).toBe(200);
    expect((await registry(req("GET", "/v2/team/app/manifests/missing"))).status).toBe(404);

    const text = metrics.render();
    const requests = (handler: string, method: string, code: string) => valueOf(text, "registry_http_requests_total", { handler, method, code });
    // pushImage: two blobs (POST, PUT each), one manifest PUT.
    expect(requests("blob_upload", "post", "202")).toBe(2);
    expect(requests("blob_upload_chunk", "put", "201")).toBe(2);
    expect(requests("manifest", "put", "201")).toBe(2);
    expect(requests("manifest", "get", "200")).toBe(1);
    expect(requests("manifest", "get", "404")).toBe(1);
    expect(requests("blob", "get", "200")).toBe(1);
    expect(requests("blob", "head", "200")).toBe(1);
    expect(valueOf(text, "registry_http_request_duration_seconds_count", { handler: "manifest", method: "get" })).toBe(2);
    expect(valueOf(text, "registry_http_request_duration_seconds_bucket", { handler: "manifest", method: "get", le: "+Inf" })).toBe(2);
    // Sizes from Content-Length: the manifest bytes in, the layer bytes out (HEAD counts 0).
    expect(valueOf(text, "registry_http_request_size_bytes_sum", { handler: "manifest" })).toBe(length);
    expect(valueOf(text, "registry_http_request_size_bytes_bucket", { handler: "manifest", le: "1024" })).toBe(4);
    expect(valueOf(text, "registry_http_response_size_bytes_sum", { handler: "blob" })).toBe("layer-bytes-x".length);
    expect(valueOf(text, "registry_http_response_size_bytes_count", { handler: "blob" })).toBe(2);
    expect(valueOf(text, "registry_http_in_flight_requests", { handler: "blob_upload_chunk" })).toBe(0);
    // The storage was used and timed, and nothing failed.
    expect(valueOf(text, "registry_storage_action_seconds_count", { driver: "memory", action: "write" })).toBeGreaterThan(0);
    expect(valueOf(text, "registry_storage_action_seconds_count", { driver: "memory", action: "move" })).toBeGreaterThanOrEqual(2);
    expect(text).not.toContain("registrykit_storage_errors_total{");
    // Every upload body byte stored: the config and the layer.
    const configBytes = bytes(JSON.stringify({ architecture: "amd64", os: "linux", seed: "x" })).byteLength;
    expect(valueOf(text, "registrykit_blob_upload_bytes_total")).toBe(configBytes + "layer-bytes-x".length);
  });

  it("shows an upload in flight while its body is being received", async () => {
    const metrics = createMetrics();
    const registry = createRegistry({ storage: memoryStorage(), uploadSecret: "s".repeat(32), metrics });
    const start = await registry(req("POST", "/v2/app/blobs/uploads/"));
    let feed!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) });
    const patch = registry(new Request(start.headers.get("location")!, { method: "patch", body, duplex: "half", headers: { "content-type": "application/octet-stream" } } as RequestInit));
    feed.enqueue(bytes("part one"));
    await new Promise((r) => setTimeout(r, 0));
    expect(valueOf(metrics.render(), "registry_http_in_flight_requests", { handler: "blob_upload_chunk" })).toBe(1);
    feed.close();
    expect((await patch).status).toBe(202);
    const text = metrics.render();
    expect(valueOf(text, "registry_http_in_flight_requests", { handler: "blob_upload_chunk" })).toBe(0);
    // A streamed body has no Content-Length; its bytes are counted as stored.
    expect(valueOf(text, "registry_http_request_size_bytes_sum", { handler: "blob_upload_chunk" })).toBe(0);
    expect(valueOf(text, "registrykit_blob_upload_bytes_total")).toBe("part one".length);
  });

  it("counts storage errors by action and code, and a handler that throws as a 500", async () => {
    const metrics = createMetrics();
    const broken: StorageDriver = { ...memoryStorage(), name: "broken", stat: async () => { throw new StorageError("io", "disk on fire"); } };
    const storage = instrumentStorage(broken, metrics, "filesystem");
    await expect(storage.stat("a")).rejects.toThrow("disk on fire");
    await expect(storage.stat("b")).rejects.toThrow("disk on fire");
    expect(await storage.read("missing")).toBeUndefined();
    const failing = instrumentHandler(async () => { throw new Error("boom"); }, metrics, "users");
    await expect(failing(new Request(`${BASE}/api/users`))).rejects.toThrow("boom");

    const text = metrics.render();
    expect(valueOf(text, "registrykit_storage_errors_total", { driver: "filesystem", action: "stat", code: "io" })).toBe(2);
    expect(valueOf(text, "registry_storage_action_seconds_count", { driver: "filesystem", action: "stat" })).toBe(2);
    expect(valueOf(text, "registry_storage_action_seconds_count", { driver: "filesystem", action: "read" })).toBe(1);
    expect(valueOf(text, "registry_http_requests_total", { handler: "users", code: "500", method: "get" })).toBe(1);
  });
});

describe("instrumentHandler and the in-memory lane", () => {
  it("counts an in-memory body's size without reading its headers, so the adapter keeps its fast path", async () => {
    const metrics = createMetrics();
    const request = new Request(`${BASE}/v2/a/manifests/x`);
    markInMemoryReader(request);
    const handler = instrumentHandler(async (r: Request) => inMemoryResponse(r, bytes("twelve bytes"), { status: 200, headers: { "content-length": "12" } }), metrics, registryRouteLabel);
    const response = await handler(request);
    expect(takeInMemoryBody(response)?.headers).toBeDefined();
    expect(valueOf(metrics.render(), "registry_http_response_size_bytes_sum", { handler: "manifest" })).toBe(12);
  });
});

describe("token service metrics", () => {
  it("counts issued tokens and refusals by reason", async () => {
    const metrics = createMetrics();
    const service = createTokenService({
      issuer: "iss", service: "reg", keys: hmacKeys({ secret: "k".repeat(32) }),
      checkCredentials: memoryCredentials({ alice: { password: "alice-pw" } }), metrics,
    });
    const basic = (u: string, p: string) => ({ authorization: `Basic ${btoa(`${u}:${p}`)}` });
    expect((await service(new Request(`${BASE}/token?service=reg&scope=repository:a:pull`, { headers: basic("alice", "alice-pw") }))).status).toBe(200);
    expect((await service(new Request(`${BASE}/token?service=reg`))).status).toBe(200);
    expect((await service(new Request(`${BASE}/token?service=reg`, { headers: basic("alice", "wrong") }))).status).toBe(401);
    expect((await service(new Request(`${BASE}/token?service=other`))).status).toBe(400);

    const text = metrics.render();
    expect(valueOf(text, "registrykit_token_requests_total", { outcome: "issued", reason: "" })).toBe(2);
    expect(valueOf(text, "registrykit_token_requests_total", { outcome: "refused", reason: "unauthorized" })).toBe(1);
    expect(valueOf(text, "registrykit_token_requests_total", { outcome: "refused", reason: "invalid_request" })).toBe(1);
  });
});

describe("health over HTTP", () => {
  function flaky() {
    const state = { broken: false };
    const base = memoryStorage();
    const storage: StorageDriver = {
      ...base,
      list: async (prefix, options) => {
        if (state.broken) throw new StorageError("io", "storage unreachable");
        return base.list(prefix, options);
      },
    };
    return { state, storage };
  }

  it("answers /debug/health 200 {} or 503 with the failing check, and gates the API with 503 UNAVAILABLE while it fails", async () => {
    const { state, storage } = flaky();
    const checks = createHealthChecks();
    checks.add({ name: "storagedriver_inmemory", check: storageHealthCheck(storage), intervalMs: 60_000, threshold: 2 });
    const registry = healthGate(createRegistry({ storage, uploadSecret: "s".repeat(32) }), checks);
    const status = healthStatusHandler(checks);
    try {
      await checks.pollNow();
      let health = await status(new Request(`${BASE}/debug/health`));
      expect(health.status).toBe(200);
      expect(await health.text()).toBe("{}");
      expect(health.headers.get("content-type")).toBe("application/json");

      state.broken = true;
      await checks.pollNow();
      expect((await registry(req("GET", "/v2/"))).status).toBe(200); // one failure is below the threshold
      await checks.pollNow();
      health = await status(new Request(`${BASE}/debug/health`));
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ storagedriver_inmemory: "storage unreachable" });
      const gated = await registry(req("GET", "/v2/"));
      expect(gated.status).toBe(503);
      expect(await gated.json()).toEqual({
        errors: [{ code: "UNAVAILABLE", message: "service unavailable", detail: "health check failed: please see /debug/health" }],
      });
      const head = await registry(req("HEAD", "/v2/a/manifests/x"));
      expect(head.status).toBe(503);
      expect(head.body).toBeNull();

      state.broken = false;
      await checks.pollNow();
      expect((await registry(req("GET", "/v2/"))).status).toBe(200);
      expect((await status(new Request(`${BASE}/debug/health`, { method: "post" }))).status).toBe(404);
    } finally {
      checks.stop();
    }
  });

  it("serves the metrics in the text format on GET only", async () => {
    const metrics = createMetrics();
    metrics.counter("x_total", "x").labels().inc();
    const handler = metricsHandler(metrics);
    const response = await handler(new Request(`${BASE}/metrics`));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(PROMETHEUS_CONTENT_TYPE);
    expect(valueOf(await response.text(), "x_total")).toBe(1);
    expect((await handler(new Request(`${BASE}/metrics`, { method: "post" }))).status).toBe(405);
  });
});
