/**
 * `registry-kit serve` with `http.debug` on a second port: /debug/health and
 * Prometheus metrics there (checked by promtool, Prometheus' own parser and
 * linter), never on the main port; `health.storagedriver` turning the API to
 * 503 while the storage root is broken, and back; `health.file`, `http` and
 * `tcp` checks failing and passing.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { valueOf } from "../util/prometheus-parse.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-serve-debug-"));
});
afterAll(async () => {
  await Promise.all(children.filter((c) => c.exitCode === null).map((c) => {
    const exited = new Promise((r) => c.on("exit", r));
    c.kill("SIGTERM");
    return exited;
  }));
  await rm(dir, { recursive: true, force: true });
});

/** Start serve on `config`; resolves with the main and the debug URL from the banner. */
function start(configFile: string): Promise<{ url: string; debug: string; out: () => string }> {
  const c = spawn(process.execPath, [BIN, "serve", configFile], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  children.push(c);
  let out = "";
  c.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  c.stderr!.on("data", (b: Buffer) => (out += b.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner after 20 s:\n${out}`)), 20_000);
    c.stdout!.on("data", () => {
      const main = /registry-kit listening on (http:\/\/\S+)/.exec(out);
      const debug = /debug +(http:\/\/\S+)/.exec(out);
      if (main && debug && out.includes("SIGTERM stops the server")) {
        clearTimeout(timer);
        resolve({ url: main[1]!, debug: debug[1]!, out: () => out });
      }
    });
    c.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${out}`));
    });
  });
}

const sha256 = (b: Uint8Array | string) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

async function pushBlob(url: string, name: string, content: string): Promise<string> {
  const digest = sha256(content);
  const post = await fetch(`${url}/v2/${name}/blobs/uploads/`, { method: "post" });
  expect(post.status).toBe(202);
  const location = new URL(post.headers.get("location")!, url);
  location.searchParams.set("digest", digest);
  const put = await fetch(location, { method: "put", body: content, headers: { "content-type": "application/octet-stream" } });
  expect(put.status).toBe(201);
  return digest;
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("registry-kit serve with http.debug and health.storagedriver", () => {
  it("serves health and metrics on the debug port only, counts a push, and answers 503 while the storage is broken", async () => {
    const root = path.join(dir, "root");
    await mkdir(root);
    const configFile = path.join(dir, "config.yml");
    await writeFile(configFile, [
      "version: 0.1",
      "log: { accesslog: { disabled: true }, level: error }",
      "http:",
      "  addr: 127.0.0.1:0",
      "  debug: { addr: 127.0.0.1:0, prometheus: { enabled: true, path: /metrics } }",
      `storage: { filesystem: { rootdirectory: ${JSON.stringify(root)} } }`,
      "health: { storagedriver: { enabled: true, interval: 100ms, threshold: 2 } }",
      `registrykit: { keydirectory: ${JSON.stringify(path.join(dir, "keys"))} }`,
      "",
    ].join("\n"));
    const { url, debug } = await start(configFile);
    expect(new URL(debug).port).not.toBe(new URL(url).port);

    // A push: two blobs and a manifest.
    const configText = JSON.stringify({ architecture: "amd64", os: "linux" });
    const config = await pushBlob(url, "team/app", configText);
    const layer = await pushBlob(url, "team/app", "layer bytes");
    const manifest = JSON.stringify({
      schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: config, size: configText.length },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: layer, size: 11 }],
    });
    const put = await fetch(`${url}/v2/team/app/manifests/v1`, { method: "put", body: manifest, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });
    expect(put.status).toBe(201);
    expect((await fetch(`${url}/v2/team/app/blobs/${layer}`)).status).toBe(200);

    // Health and metrics: on the debug port, not on the main one.
    const health = await fetch(`${debug}/debug/health`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe("{}");
    expect((await fetch(`${url}/debug/health`)).status).toBe(404);
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    const scrape = await fetch(`${debug}/metrics`);
    expect(scrape.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await scrape.text();
    expect(valueOf(text, "registry_http_requests_total", { handler: "blob_upload", method: "post", code: "202" })).toBe(2);
    expect(valueOf(text, "registry_http_requests_total", { handler: "blob_upload_chunk", method: "put", code: "201" })).toBe(2);
    expect(valueOf(text, "registry_http_requests_total", { handler: "manifest", method: "put", code: "201" })).toBe(1);
    expect(valueOf(text, "registry_http_request_size_bytes_sum", { handler: "manifest" })).toBe(Buffer.byteLength(manifest));
    expect(valueOf(text, "registry_http_response_size_bytes_sum", { handler: "blob" })).toBe(11);
    expect(valueOf(text, "registrykit_blob_upload_bytes_total")).toBe(configText.length + 11);
    expect(valueOf(text, "registry_storage_action_seconds_count", { driver: "filesystem", action: "move" })).toBeGreaterThanOrEqual(2);
    // The process (the server's, a child of this test) and the runtime, as on Distribution's page (issue 43).
    expect(valueOf(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(valueOf(text, "process_resident_memory_bytes")).toBeGreaterThan(20 * 2 ** 20);
    expect(valueOf(text, "process_virtual_memory_bytes")).toBeGreaterThan(valueOf(text, "process_resident_memory_bytes"));
    expect(valueOf(text, "process_virtual_memory_max_bytes")).toBeGreaterThan(0);
    expect(Math.abs(valueOf(text, "process_start_time_seconds") - Date.now() / 1000)).toBeLessThan(120);
    expect(valueOf(text, "process_open_fds")).toBeGreaterThan(5);
    expect(valueOf(text, "process_max_fds")).toBeGreaterThanOrEqual(valueOf(text, "process_open_fds"));
    expect(valueOf(text, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(valueOf(text, "nodejs_heap_size_total_bytes")).toBeGreaterThanOrEqual(valueOf(text, "nodejs_heap_size_used_bytes"));
    expect(valueOf(text, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThan(0);
    expect(valueOf(text, "nodejs_version_info", { version: process.version })).toBe(1);
    expect(text).toMatch(/^# TYPE process_cpu_seconds_total counter$/m);
    expect(text).toMatch(/^# HELP process_open_fds Number of open file descriptors\.$/m);
    // Prometheus' own parser and linter accept the page.
    const promtool = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(promtool.error).toBeUndefined();
    expect(`${promtool.stdout}${promtool.stderr}`.trim()).toBe("");
    expect(promtool.status).toBe(0);

    // Break the storage: the root becomes a symlink loop (every access fails with ELOOP; as root, chmod would not stop us).
    await rename(root, `${root}.real`);
    await symlink(root, root);
    await until("/debug/health to answer 503", async () => (await fetch(`${debug}/debug/health`)).status === 503);
    const failing = (await (await fetch(`${debug}/debug/health`)).json()) as Record<string, string>;
    expect(Object.keys(failing)).toEqual(["storagedriver_filesystem"]);
    const gated = await fetch(`${url}/v2/`);
    expect(gated.status).toBe(503);
    expect(await gated.json()).toEqual({ errors: [{ code: "UNAVAILABLE", message: "service unavailable", detail: "health check failed: please see /debug/health" }] });
    const errors = valueOf(await (await fetch(`${debug}/metrics`)).text(), "registrykit_storage_errors_total", { driver: "filesystem", action: "list", code: "io" });
    expect(errors).toBeGreaterThanOrEqual(2);

    // Repair it: healthy again, and the image is still there.
    await rm(root);
    await rename(`${root}.real`, root);
    await until("/debug/health to answer 200", async () => (await fetch(`${debug}/debug/health`)).status === 200);
    expect((await fetch(`${url}/v2/team/app/manifests/v1`, { headers: { accept: "application/vnd.oci.image.manifest.v1+json" } })).status).toBe(200);
  });
});

describe("registry-kit serve with health.file, health.http and health.tcp", () => {
  it("fails each check as Distribution does (file present; HEAD not answering the status; TCP refused), gating the API, and recovers", async () => {
    // The service the http and tcp checks probe: answers HEAD /ping with 204.
    const probed = createServer((req, res) => {
      res.statusCode = req.url === "/ping" ? 204 : 404;
      res.end();
    });
    await new Promise<void>((r) => probed.listen(0, "127.0.0.1", r));
    const port = (probed.address() as AddressInfo).port;
    const flag = path.join(dir, "maintenance.flag");
    const configFile = path.join(dir, "config-checks.yml");
    await writeFile(configFile, [
      "version: 0.1",
      "log: { accesslog: { disabled: true }, level: error }",
      "http: { addr: 127.0.0.1:0, debug: { addr: 127.0.0.1:0 } }",
      "storage: { inmemory: {} }",
      "health:",
      `  file: [{ file: ${JSON.stringify(flag)}, interval: 100ms }]`,
      `  http: [{ uri: "http://127.0.0.1:${port}/ping", statuscode: 204, interval: 100ms, threshold: 2 }]`,
      `  tcp: [{ addr: "127.0.0.1:${port}", interval: 100ms, timeout: 1s }]`,
      `registrykit: { keydirectory: ${JSON.stringify(path.join(dir, "keys2"))} }`,
      "",
    ].join("\n"));
    const { url, debug } = await start(configFile);
    const health = async () => {
      const res = await fetch(`${debug}/debug/health`);
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    // Let each check poll a few times (a check that wrongly failed would show here; healthy needs no waiting).
    await new Promise((r) => setTimeout(r, 500));
    expect(await health()).toEqual({ status: 200, body: {} });

    await writeFile(flag, "");
    await until("the file check to fail", async () => (await health()).status === 503);
    expect((await health()).body).toEqual({ [flag]: "file exists" });
    expect((await fetch(`${url}/v2/`)).status).toBe(503);
    await rm(flag);
    await until("the file check to pass", async () => (await health()).status === 200);

    await new Promise<void>((r) => probed.close(() => r()));
    await until("the http and tcp checks to fail", async () => Object.keys((await health()).body).length === 2);
    const failing = (await health()).body;
    expect(failing[`http://127.0.0.1:${port}/ping`]).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/ping: error while checking: `));
    expect(failing[`127.0.0.1:${port}`]).toMatch(new RegExp(`^127\\.0\\.0\\.1:${port}: connection failed: .*ECONNREFUSED`));
    expect((await fetch(`${url}/v2/`)).status).toBe(503);
  });
});
