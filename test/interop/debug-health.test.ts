/**
 * `http.debug` and `health.storagedriver` side by side: Debian's
 * `docker-registry` (Distribution 2.8) and `registry-kit serve` on the same
 * config file. skopeo pushes an image to each; both then serve
 * `/debug/health` and Prometheus metrics on the debug address with the
 * Distribution metric names registry-kit claims to share, and both turn
 * `/debug/health` and the API to 503 while the storage root is broken (a
 * symlink loop) or a `health.file` flag exists, and back once repaired.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { rename, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestImage, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, tempDir, waitFor, type Background } from "./helpers/process.js";
import { answers, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";
import { parseExposition, valueOf } from "../util/prometheus-parse.js";

/** The families registry-kit shares with Distribution, and their types. */
const SHARED = {
  registry_http_requests_total: "COUNTER",
  registry_http_request_duration_seconds: "HISTOGRAM",
  registry_http_request_size_bytes: "HISTOGRAM",
  registry_http_response_size_bytes: "HISTOGRAM",
  registry_http_in_flight_requests: "GAUGE",
  registry_storage_action_seconds: "HISTOGRAM",
  // Prometheus' Go client's process collector on Distribution's page; registry-kit's process-metrics.ts (issue 43).
  process_cpu_seconds_total: "COUNTER",
  process_start_time_seconds: "GAUGE",
  process_resident_memory_bytes: "GAUGE",
  process_virtual_memory_bytes: "GAUGE",
  process_virtual_memory_max_bytes: "GAUGE",
  process_open_fds: "GAUGE",
  process_max_fds: "GAUGE",
} as const;

interface Side {
  url: string;
  debug: string;
  root: string;
  flag: string;
  server: Background;
}

describe("http.debug and health.storagedriver: Distribution 2.8 and registry-kit on one config", () => {
  const work = tempDir("debug-health");
  const sides = new Map<SameConfigServer, Side>();
  let skopeo: SkopeoSandbox;
  let img: TestImage;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    img = buildTestImage(join(work.path, "image"), { layers: 1 });
    for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
      const [port, debugPort] = [await freePort(), await freePort()];
      const dir = join(work.path, which);
      const root = join(dir, "data");
      const flag = join(dir, "maintenance.flag");
      mkdirSync(root, { recursive: true });
      const config = writeConfig(dir, {
        version: 0.1,
        log: { level: "error", accesslog: { disabled: true } },
        http: { addr: `127.0.0.1:${port}`, debug: { addr: `127.0.0.1:${debugPort}`, prometheus: { enabled: true, path: "/metrics" } } },
        storage: { filesystem: { rootdirectory: root } },
        health: { storagedriver: { enabled: true, interval: "500ms", threshold: 2 }, file: [{ file: flag, interval: "500ms" }] },
      });
      const url = `http://127.0.0.1:${port}`;
      const debug = `http://127.0.0.1:${debugPort}`;
      const server = await startOnConfig(which, config, dir, async () => (await answers(`${url}/v2/`)()) && (await answers(`${debug}/debug/health`)()));
      sides.set(which, { url, debug, root, flag, server });
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...sides.values()].map((s) => s.server.stop()));
    skopeo?.remove();
    work.remove();
  });

  const side = (which: SameConfigServer): Side => sides.get(which)!;

  it("skopeo pushes to both; both answer /debug/health 200 {} on the debug address", async () => {
    for (const [which, s] of sides) {
      const push = await skopeo.copy(img.ref, `docker://${new URL(s.url).host}/team/app:v1`);
      expect(push.code, `${which}: ${describeRun(push)}\n${s.server.output().slice(-4000)}`).toBe(0);
      const health = await fetch(`${s.debug}/debug/health`);
      expect(health.status, which).toBe(200);
      expect(await health.json(), which).toEqual({});
    }
  });

  it("both serve the shared metric families with the same types, and count the push under the same handler, method and code labels", async () => {
    const texts = new Map<SameConfigServer, string>();
    for (const [which, s] of sides) {
      const res = await fetch(`${s.debug}/metrics`);
      expect(res.status, which).toBe(200);
      expect(res.headers.get("content-type"), which).toMatch(/^text\/plain; version=0\.0\.4/);
      texts.set(which, await res.text());
    }
    for (const [which, text] of texts) {
      const families = parseExposition(text);
      for (const [name, type] of Object.entries(SHARED)) expect(families.get(name)?.type, `${which} ${name}`).toBe(type);
      for (const name of Object.keys(SHARED).filter((n) => n.startsWith("process_"))) {
        expect(families.get(name)?.help, `${which} ${name}`).toBe(parseExposition(texts.get("distribution")!).get(name)?.help);
      }
      expect(valueOf(text, "process_open_fds"), which).toBeGreaterThan(3);
      // One config blob and one layer: a POST and a PUT each; one manifest PUT.
      expect(valueOf(text, "registry_http_requests_total", { handler: "blob_upload", method: "post", code: "202" }), which).toBe(2);
      expect(valueOf(text, "registry_http_requests_total", { handler: "manifest", method: "put", code: "201" }), which).toBe(1);
      expect(valueOf(text, "registry_http_in_flight_requests", { handler: "blob_upload_chunk" }), which).toBe(0);
      expect(valueOf(text, "registry_storage_action_seconds_count", { driver: "filesystem", action: storageAction(which) }), which).toBeGreaterThan(0);
    }
    // skopeo streams blobs without Content-Length; registry-kit's own counter still has every byte pushed.
    const pushed = img.config.size + img.layers.reduce((n, l) => n + l.size, 0);
    expect(valueOf(texts.get("registry-kit")!, "registrykit_blob_upload_bytes_total")).toBe(pushed);
  });

  it("both answer 503 on /debug/health and on the API while the storage root is a symlink loop, and recover", async () => {
    for (const s of sides.values()) {
      await rename(s.root, `${s.root}.real`);
      await symlink(s.root, s.root);
    }
    for (const [which, s] of sides) {
      await waitFor(`${which} /debug/health to answer 503`, async () => (await fetch(`${s.debug}/debug/health`)).status === 503, 20_000);
      const failing = (await (await fetch(`${s.debug}/debug/health`)).json()) as Record<string, string>;
      expect(Object.keys(failing), which).toEqual(["storagedriver_filesystem"]);
      const api = await fetch(`${s.url}/v2/`);
      expect(api.status, which).toBe(503);
      const body = (await api.json()) as { errors: { code: string; detail: unknown }[] };
      expect(body.errors.map((e) => e.code), which).toEqual(["UNAVAILABLE"]);
      expect(body.errors[0]!.detail, which).toBe("health check failed: please see /debug/health");
    }
    for (const s of sides.values()) {
      await rm(s.root);
      await rename(`${s.root}.real`, s.root);
    }
    for (const [which, s] of sides) {
      await waitFor(`${which} /debug/health to answer 200 again`, async () => (await fetch(`${s.debug}/debug/health`)).status === 200, 20_000);
      const back = await skopeo.inspectRaw(`docker://${new URL(s.url).host}/team/app:v1`);
      expect(back.equals(img.manifestBytes), which).toBe(true);
    }
  });

  it("both fail the health.file check with the same name and message while the flag file exists", async () => {
    for (const s of sides.values()) writeFileSync(s.flag, "");
    for (const [which, s] of sides) {
      await waitFor(`${which} /debug/health to answer 503`, async () => (await fetch(`${s.debug}/debug/health`)).status === 503, 20_000);
      expect(await (await fetch(`${s.debug}/debug/health`)).json(), which).toEqual({ [s.flag]: "file exists" });
      expect((await fetch(`${s.url}/v2/`)).status, which).toBe(503);
    }
    for (const s of sides.values()) await rm(s.flag);
    for (const [which, s] of sides) {
      await waitFor(`${which} /debug/health to answer 200 again`, async () => (await fetch(`${s.debug}/debug/health`)).status === 200, 20_000);
    }
  });
});

/** A storage action both count during a push: Distribution names Go driver methods, registry-kit its contract's. */
function storageAction(which: SameConfigServer): string {
  return which === "distribution" ? "PutContent" : "write";
}
