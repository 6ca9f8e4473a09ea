/**
 * Side by side on the same config files (issue 17): Distribution 2.8 and
 * `registry-kit serve` in read-only maintenance mode
 * (`storage.maintenance.readonly.enabled`), and on a misspelt storage driver.
 * For each: an image is pushed while writable; restarted read-only on the same
 * storage, skopeo's push is refused, a raw upload POST and manifest PUT get
 * the same status, the pull still gives identical digests, and nothing under
 * the storage root changes.
 */
import { readdirSync, statSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestImage, readOciLayout, OCI_MANIFEST, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, requireTool, run, tempDir } from "./helpers/process.js";
import { started, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));

/**
 * Every file under `root` with its size, sorted: "what is stored". The fs
 * driver's `~writers/` holds per-process lock files (a stopped process's are
 * removed when the next one starts), which are not registry content.
 */
function storedFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (dir !== root || entry.name !== "~writers") walk(path);
      }
      else out.push(`${relative(root, path)} ${statSync(path).size}`);
    }
  };
  walk(root);
  return out.sort();
}

interface Outcome {
  pushCode: number;
  postStatus: number;
  manifestPutStatus: number;
  deleteStatus: number;
  pullOk: boolean;
  storedUnchanged: boolean;
}

describe("storage.maintenance.readonly, same config file, both registries", () => {
  const work = tempDir("same-config-maintenance");
  let skopeo: SkopeoSandbox;
  let img: TestImage;
  const outcomes: Partial<Record<SameConfigServer, Outcome>> = {};

  beforeAll(() => {
    skopeo = skopeoSandbox();
    img = buildTestImage(join(work.path, "src"), { sizes: [2048, 40_000] });
  });
  afterAll(() => {
    skopeo?.remove();
    work.remove();
  });

  async function phase(which: SameConfigServer, dir: string, readOnly: boolean) {
    const port = await freePort();
    const config = writeConfig(dir, {
      version: 0.1,
      http: { addr: `127.0.0.1:${port}`, secret: "same-secret" },
      storage: {
        filesystem: { rootdirectory: join(dir, "data") },
        delete: { enabled: true },
        ...(readOnly ? { maintenance: { readonly: { enabled: true } } } : {}),
      },
    }, readOnly ? "readonly.yml" : "writable.yml");
    const server = await startOnConfig(which, config, dir, started(`http://127.0.0.1:${port}/v2/`));
    return { server, host: `127.0.0.1:${port}` };
  }

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: read-only refuses writes and keeps serving reads`, async () => {
      const dir = join(work.path, which);
      mkdirSync(dir, { recursive: true });
      const writable = await phase(which, dir, false);
      try {
        const push = await skopeo.copy(img.ref, `docker://${writable.host}/ro/app:v1`);
        expect(push.code, describeRun(push)).toBe(0);
      } finally {
        await writable.server.stop();
      }
      const before = storedFiles(join(dir, "data"));
      const ro = await phase(which, dir, true);
      try {
        const base = `http://${ro.host}/v2/ro/app`;
        const push = await skopeo.copy(img.ref, `docker://${ro.host}/ro/app:v2`);
        const post = await fetch(`${base}/blobs/uploads/`, { method: "POST" });
        await post.arrayBuffer();
        const manifest = await fetch(`${base}/manifests/v1`, { headers: { accept: OCI_MANIFEST } });
        const manifestBytes = new Uint8Array(await manifest.arrayBuffer());
        const put = await fetch(`${base}/manifests/v3`, { method: "PUT", body: manifestBytes, headers: { "content-type": OCI_MANIFEST } });
        await put.arrayBuffer();
        const del = await fetch(`${base}/manifests/${img.manifestDigest}`, { method: "DELETE" });
        await del.arrayBuffer();
        const back = join(dir, "back");
        const pull = await skopeo.copy(`docker://${ro.host}/ro/app:v1`, `oci:${back}:v1`);
        expect(pull.code, describeRun(pull)).toBe(0);
        const got = readOciLayout(back, "v1");
        outcomes[which] = {
          pushCode: push.code === 0 ? 0 : 1,
          postStatus: post.status,
          manifestPutStatus: put.status,
          deleteStatus: del.status,
          pullOk: got.manifestDigest === img.manifestDigest && JSON.stringify(got.layerDigests) === JSON.stringify(img.layers.map((l) => l.digest)),
          storedUnchanged: JSON.stringify(storedFiles(join(dir, "data"))) === JSON.stringify(before),
        };
        expect(outcomes[which]).toEqual({ pushCode: 1, postStatus: 405, manifestPutStatus: 405, deleteStatus: 405, pullOk: true, storedUnchanged: true });
      } finally {
        await ro.server.stop();
      }
    });
  }

  it("both gave the same outcomes", () => {
    expect(outcomes["registry-kit"]).toBeDefined();
    expect(outcomes["registry-kit"]).toEqual(outcomes.distribution);
  });

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: a misspelt storage driver (filesytem) stops start-up`, async () => {
      const dir = join(work.path, `${which}-typo`);
      mkdirSync(dir, { recursive: true });
      const port = await freePort();
      const config = writeConfig(dir, { version: 0.1, http: { addr: `127.0.0.1:${port}` }, storage: { filesytem: { rootdirectory: join(dir, "data") } } });
      const result = which === "distribution"
        ? await run(requireTool("docker-registry"), ["serve", config], { cwd: dir, timeoutMs: 30_000 })
        : await run(process.execPath, [BIN, "serve", config], { cwd: dir, timeoutMs: 30_000 });
      expect(result.timedOut, describeRun(result)).toBe(false);
      expect(result.code).not.toBe(0);
      expect(result.stdout + result.stderr).toMatch(/filesytem/);
      if (which === "registry-kit") expect(result.stderr).toContain('did you mean "filesystem"?');
    });
  }
});
