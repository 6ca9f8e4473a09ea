/**
 * Side by side on the same config file (issue 17): Distribution 2.8 and
 * `registry-kit serve` with `http.prefix: /my/reg/`.
 *
 * Direct requests: the same statuses and error codes in and outside the
 * prefix, and the same `Location` (upload POST, PATCH, PUT, mount, manifest
 * PUT) and `Link` (catalog) URLs, all under the prefix.
 *
 * Real clients: skopeo (like podman and docker) takes a registry to be a
 * host with `/v2/` at its root; `host/my/reg/app` names the repository
 * `my/reg/app` there, so a push straight to either server fails. Through
 * nginx mapping `/v2/` to `/my/reg/v2/` (and passing `/my/reg/` on, where the
 * `Location` headers point), skopeo pushes, pulls and copies on both, podman
 * pulls, and the pulled digests are the pushed ones. registry-kit alone: with its token
 * service and `http.host` naming the proxy, the realm is under the prefix and
 * skopeo logs in through it.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, tempDir } from "./helpers/process.js";
import { startPrefixProxy } from "./helpers/prefix-proxy.js";
import { started, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";
import { containersSandbox, INSECURE, type ContainersSandbox } from "./helpers/containers.js";

const PREFIX = "/my/reg";
const CONFIG_DIGEST = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"; // "{}"
const MANIFEST = JSON.stringify({
  schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: CONFIG_DIGEST, size: 2 }, layers: [],
});

interface Outcome {
  /** `METHOD path` → status, and the OCI error code when the body has one. */
  answers: Record<string, string>;
  /** Each `Location`, its origin written as ORIGIN, upload ids as UUID, without the query. */
  locations: string[];
  /** The catalog's next-page `Link`: its path and its query parameters in order of name. */
  catalogLink: string;
  /** skopeo straight to `host:port/my/reg/app`: 0 or 1. */
  directPushCode: number;
  /** Through nginx: push, pull back and registry-to-registry copy all gave the pushed digests. */
  throughProxy: boolean;
  /** Through nginx: podman pulled the copy, and its digest is the pushed manifest's. */
  podmanPull: boolean;
}

async function answer(res: Response): Promise<string> {
  const text = await res.text();
  let code = "";
  try {
    code = (JSON.parse(text) as { errors?: { code: string }[] }).errors?.[0]?.code ?? "";
  } catch {
    // Distribution answers its 404s outside the router in plain text.
  }
  return code ? `${res.status} ${code}` : String(res.status);
}

function locationOf(res: Response, origin: string): string {
  const raw = res.headers.get("location") ?? "(none)";
  return raw.replace(origin, "ORIGIN").replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/, "UUID").replace(/\?.*$/, "");
}

function linkOf(res: Response): string {
  const m = /^<([^>]+)>; rel="next"$/.exec(res.headers.get("link") ?? "");
  if (!m) return `(no link: ${res.headers.get("link")})`;
  const url = new URL(m[1]!, "http://x");
  return `${url.pathname}?${[...url.searchParams].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join("&")}`;
}

/** The direct requests, in order (each write leaves what the next needs). */
async function directRequests(origin: string): Promise<Pick<Outcome, "answers" | "locations" | "catalogLink">> {
  const answers: Record<string, string> = {};
  const locations: string[] = [];
  const at = (p: string) => `${origin}${p}`;
  for (const p of ["/", "/v2/", `${PREFIX}/v2/`, PREFIX, `${PREFIX}/`, "/my/regx/v2/", `${PREFIX}/v2/_catalog`, `${PREFIX}/v2/team/app/tags/list`,
    `${PREFIX}/v2/team/app/manifests/latest`, `${PREFIX}/v2/team/app/blobs/sha256:${"0".repeat(64)}`, `${PREFIX}/v2/team/app/blobs/sha256:zz`]) {
    answers[`GET ${p}`] = await answer(await fetch(at(p)));
  }
  const post = await fetch(at(`${PREFIX}/v2/team/app/blobs/uploads/`), { method: "POST" });
  answers["POST uploads"] = await answer(post.clone());
  locations.push(locationOf(post, origin));
  const patch = await fetch(post.headers.get("location")!, { method: "PATCH", body: "{}", headers: { "content-type": "application/octet-stream" } });
  answers["PATCH upload"] = await answer(patch.clone());
  locations.push(locationOf(patch, origin));
  const status = await fetch(patch.headers.get("location")!);
  answers["GET upload"] = await answer(status.clone());
  locations.push(locationOf(status, origin));
  const done = new URL(status.headers.get("location")!);
  done.searchParams.set("digest", CONFIG_DIGEST);
  const put = await fetch(done, { method: "PUT" });
  answers["PUT upload"] = await answer(put.clone());
  locations.push(locationOf(put, origin));
  const mount = await fetch(at(`${PREFIX}/v2/team/other/blobs/uploads/?mount=${CONFIG_DIGEST}&from=team/app`), { method: "POST" });
  answers["POST mount"] = await answer(mount.clone());
  locations.push(locationOf(mount, origin));
  const manifest = await fetch(at(`${PREFIX}/v2/team/app/manifests/v1`), { method: "PUT", body: MANIFEST, headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });
  answers["PUT manifest"] = await answer(manifest.clone());
  locations.push(locationOf(manifest, origin));
  answers["GET manifest v1"] = await answer(await fetch(at(`${PREFIX}/v2/team/app/manifests/v1`), { headers: { accept: "application/vnd.oci.image.manifest.v1+json" } }));
  const catalog = await fetch(at(`${PREFIX}/v2/_catalog?n=1`));
  answers["GET catalog n=1"] = await answer(catalog.clone());
  return { answers, locations, catalogLink: linkOf(catalog) };
}

describe("http.prefix, same config file, both registries", () => {
  const work = tempDir("same-config-prefix");
  let skopeo: SkopeoSandbox;
  let podman: ContainersSandbox;
  let img: TestImage;
  const outcomes: Partial<Record<SameConfigServer, Outcome>> = {};

  beforeAll(() => {
    skopeo = skopeoSandbox();
    podman = containersSandbox("prefix-podman");
    img = buildTestImage(join(work.path, "src"), { sizes: [3000, 20_000] });
  });
  afterAll(() => {
    skopeo?.remove();
    podman?.remove();
    work.remove();
  });

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: everything under the prefix, for direct requests and for skopeo and podman through nginx`, async () => {
      const dir = join(work.path, which);
      mkdirSync(dir, { recursive: true });
      const port = await freePort();
      const config = writeConfig(dir, {
        version: 0.1,
        http: { addr: `127.0.0.1:${port}`, prefix: `${PREFIX}/`, secret: "same-secret" },
        storage: { filesystem: { rootdirectory: join(dir, "data") }, delete: { enabled: true } },
      });
      const origin = `http://127.0.0.1:${port}`;
      const server = await startOnConfig(which, config, dir, started(`${origin}${PREFIX}/v2/`));
      try {
        const direct = await directRequests(origin);
        const straight = await skopeo.copy(img.ref, `docker://127.0.0.1:${port}${PREFIX}/app:v1`);
        const proxy = await startPrefixProxy(port, PREFIX);
        let throughProxy = false;
        let podmanPull = false;
        try {
          const push = await skopeo.copy(img.ref, `docker://${proxy.host}/app/one:v1`);
          expect(push.code, describeRun(push)).toBe(0);
          const copy = await skopeo.copy(`docker://${proxy.host}/app/one:v1`, `docker://${proxy.host}/app/two:v1`);
          expect(copy.code, describeRun(copy)).toBe(0);
          const back = join(dir, "back");
          const pull = await skopeo.copy(`docker://${proxy.host}/app/two:v1`, `oci:${back}:v1`);
          expect(pull.code, describeRun(pull)).toBe(0);
          const got = readOciLayout(back, "v1");
          throughProxy = got.manifestDigest === img.manifestDigest
            && JSON.stringify(got.layerDigests) === JSON.stringify(img.layers.map((l) => l.digest))
            && [...got.blobFileDigests].every(([name, actual]) => name === actual);
          const pulled = await podman.podman(["pull", INSECURE, `${proxy.host}/app/two:v1`]);
          expect(pulled.code, describeRun(pulled)).toBe(0);
          const inspect = await podman.podman(["image", "inspect", "--format", "{{.Digest}}", `${proxy.host}/app/two:v1`]);
          podmanPull = inspect.stdout.trim() === img.manifestDigest;
        } finally {
          await proxy.stop();
        }
        outcomes[which] = { ...direct, directPushCode: straight.code === 0 ? 0 : 1, throughProxy, podmanPull };
      } finally {
        await server.stop();
      }
      const outcome = outcomes[which]!;
      expect(outcome.answers).toMatchObject({
        "GET /": "200", [`GET ${PREFIX}/v2/`]: "200", "POST uploads": "202", "PATCH upload": "202", "GET upload": "204", "PUT upload": "201",
        "POST mount": "201", "PUT manifest": "201", "GET manifest v1": "200", [`GET ${PREFIX}/v2/team/app/blobs/sha256:${"0".repeat(64)}`]: "404 BLOB_UNKNOWN",
      });
      for (const p of ["/v2/", PREFIX, `${PREFIX}/`, "/my/regx/v2/"]) expect(outcome.answers[`GET ${p}`], p).toMatch(/^404/);
      expect(outcome.locations).toEqual([
        `ORIGIN${PREFIX}/v2/team/app/blobs/uploads/UUID`,
        `ORIGIN${PREFIX}/v2/team/app/blobs/uploads/UUID`,
        `ORIGIN${PREFIX}/v2/team/app/blobs/uploads/UUID`,
        `ORIGIN${PREFIX}/v2/team/app/blobs/${CONFIG_DIGEST}`,
        `ORIGIN${PREFIX}/v2/team/other/blobs/${CONFIG_DIGEST}`,
        `ORIGIN${PREFIX}/v2/team/app/manifests/sha256:${(await sha256Hex(MANIFEST))}`,
      ]);
      expect(outcome.catalogLink).toBe(`${PREFIX}/v2/_catalog?last=team/app&n=1`);
      expect(outcome.directPushCode).toBe(1);
      expect(outcome.throughProxy).toBe(true);
      expect(outcome.podmanPull).toBe(true);
    });
  }

  it("both gave the same outcomes", () => {
    expect(outcomes["registry-kit"]).toBeDefined();
    // Distribution answers 404s outside its router in plain text; registry-kit with a JSON body (code NOT_FOUND).
    const statusOnly = (o: Outcome) => ({ ...o, answers: Object.fromEntries(Object.entries(o.answers).map(([k, v]) => [k, v.startsWith("404 NOT_FOUND") ? "404" : v])) });
    expect(statusOnly(outcomes["registry-kit"]!)).toEqual(statusOnly(outcomes.distribution!));
  });

  it("registry-kit with its token service: the realm is under the prefix and skopeo logs in through nginx", async () => {
    const dir = join(work.path, "token");
    mkdirSync(dir, { recursive: true });
    const port = await freePort();
    const proxyPort = await freePort();
    // The default realm is built at start-up from http.host (the public URL, here the proxy's) and the prefixed token path.
    const config = writeConfig(dir, {
      version: 0.1,
      http: { addr: `127.0.0.1:${port}`, host: `http://127.0.0.1:${proxyPort}`, prefix: `${PREFIX}/`, secret: "same-secret" },
      storage: { filesystem: { rootdirectory: join(dir, "data") } },
      auth: { token: { service: "registry-kit", issuer: "registry-kit" } },
      registrykit: { keydirectory: join(dir, "keys"), tokenservice: {}, users: { admin: { password: "Adm1nPassword" } } },
    });
    const server = await startOnConfig("registry-kit", config, dir, started(`http://127.0.0.1:${port}${PREFIX}/v2/`));
    const proxy = await startPrefixProxy(port, PREFIX, proxyPort).catch(async (error: unknown) => {
      await server.stop();
      throw error;
    });
    try {
      const challenge = await fetch(`http://${proxy.host}/v2/`);
      expect(challenge.status).toBe(401);
      expect(challenge.headers.get("www-authenticate")).toBe(`Bearer realm="http://${proxy.host}${PREFIX}/service/token",service="registry-kit"`);
      const creds = { username: "admin", password: "Adm1nPassword" };
      const push = await skopeo.copy(img.ref, `docker://${proxy.host}/team/app:v1`, { destCreds: creds });
      expect(push.code, describeRun(push)).toBe(0);
      expect((await skopeo.inspectRaw(`docker://${proxy.host}/team/app:v1`, { creds })).equals(img.manifestBytes)).toBe(true);
      const anonymous = await skopeo.inspect(`docker://${proxy.host}/team/app:v1`, { noCreds: true });
      expect(anonymous.code).not.toBe(0);
    } finally {
      await proxy.stop();
      await server.stop();
    }
  });
});

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Buffer.from(digest).toString("hex");
}
