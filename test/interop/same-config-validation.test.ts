/**
 * Side by side on the same config files (issue 17): Distribution 2.8 and
 * `registry-kit serve` with `validation.manifests.urls` (Distribution's own
 * example: allow one domain, deny one host in it), without a `validation`
 * section (Distribution's default: no layer URL accepted) and with
 * `validation.disabled: true`.
 *
 * Manifest PUTs with foreign (Docker) and non-distributable (OCI) layers
 * carrying `urls`: both registries accept and refuse the same ones. They
 * differ in how: Distribution answers a refused URL with 500 and the codes
 * UNKNOWN, UNKNOWN, MANIFEST_BLOB_UNKNOWN; registry-kit with 400
 * MANIFEST_INVALID (a client error is never a 500 here). skopeo pushes an
 * image with a foreign layer (it uploads no foreign layer, only the manifest
 * naming its URL): accepted by both when the URL is allowed, refused by both
 * otherwise; an ordinary image pushes on both under the default.
 * `indexes.platforms` is Distribution 3 only (2.8 has no such key) and is
 * tested on registry-kit alone (test/registry/manifest-validation.test.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestImage, sha256, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, tempDir } from "./helpers/process.js";
import { started, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const DOCKER = "application/vnd.docker.distribution.manifest.v2+json";
const OCI = "application/vnd.oci.image.manifest.v1+json";
const FOREIGN = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip";
const NONDIST = "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip";
const OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip";
const CONFIG_BYTES = JSON.stringify({ architecture: "amd64", os: "windows", rootfs: { type: "layers", diff_ids: [sha256("x")] } });
const CONFIG = sha256(CONFIG_BYTES);
const STORED_LAYER = "a layer pushed to the registry";
const ABSENT = sha256("a layer nobody pushed");
const ALLOWED = "https://allowed.example/layer";

/** Distribution's documented example, with example.com's parts named for the test. */
const RULES = { manifests: { urls: { allow: ["^https://([^/]+\\.)*allowed\\.example/"], deny: ["^https://deny\\.allowed\\.example/"] } } };

type Phase = "rules" | "default" | "disabled";
const PHASES: Record<Phase, Record<string, unknown> | undefined> = { rules: RULES, default: undefined, disabled: { disabled: true } };

/** The manifest PUTs, by name: media type and the one layer's descriptor (its digest ABSENT unless `stored`). */
const CASES: Record<string, { type: string; layer: Record<string, unknown> }> = {
  "foreign, allowed URL": { type: DOCKER, layer: { mediaType: FOREIGN, urls: [ALLOWED] } },
  "foreign, allowed subdomain": { type: DOCKER, layer: { mediaType: FOREIGN, urls: ["https://cdn.allowed.example/layer"] } },
  "foreign, denied URL": { type: DOCKER, layer: { mediaType: FOREIGN, urls: ["https://deny.allowed.example/layer"] } },
  "foreign, other URL": { type: DOCKER, layer: { mediaType: FOREIGN, urls: ["https://other.example/layer"] } },
  "foreign, ftp URL": { type: DOCKER, layer: { mediaType: FOREIGN, urls: ["ftp://allowed.example/layer"] } },
  "foreign, URL with fragment": { type: DOCKER, layer: { mediaType: FOREIGN, urls: [`${ALLOWED}#part`] } },
  "foreign, no urls": { type: DOCKER, layer: { mediaType: FOREIGN } },
  "non-distributable, allowed URL": { type: OCI, layer: { mediaType: NONDIST, urls: [ALLOWED] } },
  "non-distributable, other URL": { type: OCI, layer: { mediaType: NONDIST, urls: ["https://other.example/layer"] } },
  "non-distributable, no urls, not pushed": { type: OCI, layer: { mediaType: NONDIST } },
  "OCI layer, other URL, pushed": { type: OCI, layer: { mediaType: OCI_LAYER, urls: ["https://other.example/layer"], stored: true } },
  "OCI layer, allowed URL, pushed": { type: OCI, layer: { mediaType: OCI_LAYER, urls: [ALLOWED], stored: true } },
};

/** `201`, or the status and the codes of the error body. */
async function answer(res: Response): Promise<string> {
  if (res.status === 201) return "201";
  const body = (await res.json().catch(() => ({}))) as { errors?: { code: string }[] };
  return `${res.status} ${(body.errors ?? []).map((e) => e.code).join(",")}`;
}

async function pushBlob(base: string, content: string): Promise<void> {
  const post = await fetch(`${base}/blobs/uploads/`, { method: "POST" });
  await post.arrayBuffer();
  const put = new URL(post.headers.get("location")!, base);
  put.searchParams.set("digest", sha256(content));
  const res = await fetch(put, { method: "PUT", body: content, headers: { "content-type": "application/octet-stream" } });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`blob PUT ${res.status}`);
}

async function manifestPuts(base: string): Promise<Record<string, string>> {
  await pushBlob(base, CONFIG_BYTES);
  await pushBlob(base, STORED_LAYER);
  const out: Record<string, string> = {};
  let n = 0;
  for (const [name, { type, layer }] of Object.entries(CASES)) {
    const { stored, ...descriptor } = layer;
    const configType = type === DOCKER ? "application/vnd.docker.container.image.v1+json" : "application/vnd.oci.image.config.v1+json";
    const doc = {
      schemaVersion: 2, mediaType: type, config: { mediaType: configType, digest: CONFIG, size: CONFIG_BYTES.length },
      layers: [{ ...descriptor, digest: stored ? sha256(STORED_LAYER) : ABSENT, size: 30 }],
    };
    out[name] = await answer(await fetch(`${base}/manifests/case${n++}`, { method: "PUT", body: JSON.stringify(doc), headers: { "content-type": type } }));
  }
  return out;
}

/** A skopeo `dir:` image whose only layer is a foreign one at `url` (skopeo uploads the config and the manifest, no layer). */
function foreignImage(dir: string, url: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "version"), "Directory Transport Version: 1.1\n");
  writeFileSync(join(dir, CONFIG.slice(7)), CONFIG_BYTES);
  writeFileSync(join(dir, "manifest.json"), JSON.stringify({
    schemaVersion: 2, mediaType: DOCKER,
    config: { mediaType: "application/vnd.docker.container.image.v1+json", digest: CONFIG, size: CONFIG_BYTES.length },
    layers: [{ mediaType: FOREIGN, digest: sha256("foreign"), size: 7, urls: [url] }],
  }));
  return `dir:${dir}`;
}

interface Outcome {
  puts: Record<string, string>;
  /** skopeo pushes of the foreign-layer image at an allowed URL, and of an ordinary image: exit codes (0 or 1). */
  skopeoForeign: number;
  skopeoOrdinary: number;
}

describe("validation.manifests.urls, same config files, both registries", () => {
  const work = tempDir("same-config-validation");
  let skopeo: SkopeoSandbox;
  let img: TestImage;
  const outcomes: Partial<Record<`${SameConfigServer} ${Phase}`, Outcome>> = {};

  beforeAll(() => {
    skopeo = skopeoSandbox();
    img = buildTestImage(join(work.path, "src"), { sizes: [2000] });
  });
  afterAll(() => {
    skopeo?.remove();
    work.remove();
  });

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: manifest PUTs and skopeo pushes under each of the three configs`, async () => {
      for (const phase of Object.keys(PHASES) as Phase[]) {
        const dir = join(work.path, which, phase);
        mkdirSync(dir, { recursive: true });
        const port = await freePort();
        const validation = PHASES[phase];
        const config = writeConfig(dir, {
          version: 0.1,
          http: { addr: `127.0.0.1:${port}`, secret: "same-secret" },
          storage: { filesystem: { rootdirectory: join(dir, "data") } },
          ...(validation ? { validation } : {}),
        });
        const server = await startOnConfig(which, config, dir, started(`http://127.0.0.1:${port}/v2/`));
        try {
          const puts = await manifestPuts(`http://127.0.0.1:${port}/v2/cases/app`);
          const foreign = await skopeo.copy(foreignImage(join(dir, "foreign"), ALLOWED), `docker://127.0.0.1:${port}/win/app:v1`);
          const ordinary = await skopeo.copy(img.ref, `docker://127.0.0.1:${port}/linux/app:v1`);
          expect(ordinary.code, describeRun(ordinary)).toBe(0);
          outcomes[`${which} ${phase}`] = { puts, skopeoForeign: foreign.code === 0 ? 0 : 1, skopeoOrdinary: ordinary.code === 0 ? 0 : 1 };
        } finally {
          await server.stop();
        }
      }
    });
  }

  /** Accepted or refused, per case. */
  const verdicts = (o: Outcome | undefined) => o && { ...o, puts: Object.fromEntries(Object.entries(o.puts).map(([k, v]) => [k, v === "201" ? "accepted" : "refused"])) };

  it("both accept and refuse the same manifests and pushes under each config", () => {
    for (const phase of Object.keys(PHASES) as Phase[]) {
      expect(verdicts(outcomes[`registry-kit ${phase}`]), phase).toBeDefined();
      expect(verdicts(outcomes[`registry-kit ${phase}`]), phase).toEqual(verdicts(outcomes[`distribution ${phase}`]));
    }
    const rules = verdicts(outcomes["registry-kit rules"])!;
    expect(Object.entries(rules.puts).filter(([, v]) => v === "accepted").map(([k]) => k)).toEqual([
      "foreign, allowed URL", "foreign, allowed subdomain", "non-distributable, allowed URL", "OCI layer, allowed URL, pushed",
    ]);
    expect(rules.skopeoForeign).toBe(0);
    const byDefault = verdicts(outcomes["registry-kit default"])!;
    expect(Object.entries(byDefault.puts).filter(([, v]) => v === "accepted").map(([k]) => k)).toEqual([]);
    expect(byDefault.skopeoForeign).toBe(1);
    const disabled = verdicts(outcomes["registry-kit disabled"])!;
    expect(Object.entries(disabled.puts).filter(([, v]) => v === "refused").map(([k]) => k)).toEqual([
      "foreign, ftp URL", "foreign, URL with fragment", "foreign, no urls", "non-distributable, no urls, not pushed",
    ]);
  });

  it("registry-kit refuses a URL with 400 MANIFEST_INVALID where Distribution answers 500 UNKNOWN; a missing layer is 400 MANIFEST_BLOB_UNKNOWN on both", () => {
    const ours = outcomes["registry-kit rules"]!.puts;
    const theirs = outcomes["distribution rules"]!.puts;
    expect(ours["foreign, other URL"]).toBe("400 MANIFEST_INVALID");
    expect(theirs["foreign, other URL"]).toBe("500 UNKNOWN,UNKNOWN,MANIFEST_BLOB_UNKNOWN");
    expect(ours["non-distributable, no urls, not pushed"]).toBe("400 MANIFEST_BLOB_UNKNOWN");
    expect(theirs["non-distributable, no urls, not pushed"]).toBe("400 MANIFEST_BLOB_UNKNOWN");
  });
});
