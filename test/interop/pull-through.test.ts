/**
 * The pull-through cache with real programs on loopback (issue 19): Debian's
 * `docker-registry` (Distribution 2.8) upstreams, one behind htpasswd Basic
 * auth and one open, seeded with skopeo; `registry-kit serve` caching the
 * first under `corp/` with a local repository beside it; skopeo pulling
 * through it. The upstreams' access logs count what reached them. Then
 * Distribution's own `proxy.remoteurl` and `registry-kit serve` side by side
 * on one config file, pulling the same image. Last, a registry-kit upstream
 * behind its own token service (the Bearer flow): registry-kit and
 * Distribution's `proxy.remoteurl` both pull from it, skopeo and podman
 * through registry-kit. And a Distribution upstream behind token auth (its
 * realm a token service on loopback), pulled through with a read-only account.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, tempDir, type Background } from "./helpers/process.js";
import { answers, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";
import { containersSandbox, type ContainersSandbox } from "./helpers/containers.js";
import { startTokenService, type TokenServiceFixture } from "./helpers/token-service.js";

/** `METHOD path status` lines of Distribution's access log (combined format). */
function accessLog(server: Background): Array<{ method: string; path: string; status: number }> {
  const out: Array<{ method: string; path: string; status: number }> = [];
  for (const m of server.output().matchAll(/"([A-Z]+) (\S+) HTTP\/[\d.]+" (\d{3}) /g)) out.push({ method: m[1]!, path: m[2]!, status: Number(m[3]) });
  return out;
}

const count = (log: ReturnType<typeof accessLog>, method: string, fragment: string, status = 200) =>
  log.filter((r) => r.method === method && r.path.includes(fragment) && r.status === status).length;

/**
 * Start `which` on a fresh config in `dir` listening on a free loopback port:
 * `version`, `http.addr` and filesystem storage under `dir`, plus `extra`.
 */
async function serverOn(which: SameConfigServer, dir: string, extra: Record<string, unknown>): Promise<{ server: Background; host: string }> {
  mkdirSync(dir, { recursive: true });
  const host = `127.0.0.1:${await freePort()}`;
  const config = writeConfig(dir, { version: 0.1, http: { addr: host }, storage: { filesystem: { rootdirectory: join(dir, "data") } }, ...extra });
  // Generous: a first start generates signing keys, which a loaded machine makes slow.
  return { server: await startOnConfig(which, config, dir, answers(`http://${host}/v2/`), 180_000), host };
}

function distributionUpstream(dir: string, htpasswd?: string): Promise<{ server: Background; host: string }> {
  return serverOn("distribution", dir, {
    log: { level: "info", formatter: "json", accesslog: { disabled: false } },
    ...(htpasswd ? { auth: { htpasswd: { realm: "upstream", path: htpasswd } } } : {}),
  });
}

describe("pull-through cache with Distribution upstreams and skopeo", () => {
  const work = tempDir("pull-through");
  const id = randomBytes(3).toString("hex");
  const corp = { username: "mirror", password: randomBytes(12).toString("base64url") };
  let skopeo: SkopeoSandbox;
  let upstream: { server: Background; host: string };
  let cache: Background;
  let cacheHost = "";
  let img: TestImage;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    const htpasswd = join(work.path, "htpasswd");
    writeFileSync(htpasswd, execFileSync("htpasswd", ["-Bbn", corp.username, corp.password]));
    upstream = await distributionUpstream(join(work.path, "upstream"), htpasswd);
    img = buildTestImage(join(work.path, "image"), { layers: 3, sizes: [200_000, 50_000, 3_000], tag: "v1" });
    const seed = await skopeo.copy(img.ref, `docker://${upstream.host}/team/app-${id}:v1`, { destCreds: corp });
    expect(seed.code, describeRun(seed)).toBe(0);

    const started = await serverOn("registry-kit", join(work.path, "cache"), {
      registrykit: {
        proxy: {
          // ttl 0: every pull of the tag asks the upstream (a HEAD), which is what this test counts.
          upstreams: [{ prefix: "corp/", remoteurl: `http://${upstream.host}`, username: corp.username, password: corp.password, ttl: "0s" }],
        },
      },
    });
    cache = started.server;
    cacheHost = started.host;
  }, 300_000);

  afterAll(async () => {
    await cache?.stop();
    await upstream?.server.stop();
    skopeo?.remove();
    work.remove();
  });

  it("three concurrent skopeo pulls make one upstream GET per blob; a second pull costs HEADs only", async () => {
    const pulls = await Promise.all(
      [1, 2, 3].map((n) => skopeo.copy(`docker://${cacheHost}/corp/team/app-${id}:v1`, `oci:${join(work.path, `out-${n}`)}:v1`)),
    );
    for (const r of pulls) expect(r.code, describeRun(r)).toBe(0);
    for (const n of [1, 2, 3]) {
      const got = readOciLayout(join(work.path, `out-${n}`), "v1");
      expect(got.manifestDigest).toBe(img.manifestDigest);
    }
    const log = accessLog(upstream.server);
    for (const digest of img.blobDigests) expect(count(log, "GET", `/blobs/${digest}`), digest).toBe(1);
    const manifestGets = count(log, "GET", `/team/app-${id}/manifests/`);
    expect(manifestGets).toBeGreaterThanOrEqual(1);

    const before = accessLog(upstream.server).length;
    const again = await skopeo.copy(`docker://${cacheHost}/corp/team/app-${id}:v1`, `oci:${join(work.path, "out-again")}:v1`);
    expect(again.code, describeRun(again)).toBe(0);
    const added = accessLog(upstream.server).slice(before).filter((r) => r.status === 200);
    expect(added.length).toBeGreaterThan(0);
    expect(added.every((r) => r.method === "HEAD" && r.path.endsWith("/manifests/v1")), JSON.stringify(added)).toBe(true);
    console.log(`upstream requests (status 200) for 3 concurrent + 1 later pull through registry-kit: ${JSON.stringify(accessLog(upstream.server).filter((r) => r.status === 200).length)} (${img.blobDigests.length} blobs)`);
  }, 180_000);

  it("pushes to a local repository beside the cache; a push under the proxied prefix is refused", async () => {
    const local = await skopeo.copy(img.ref, `docker://${cacheHost}/local/app-${id}:v1`);
    expect(local.code, describeRun(local)).toBe(0);
    const back = await skopeo.inspectRaw(`docker://${cacheHost}/local/app-${id}:v1`);
    expect(back.toString()).toBe(img.manifestBytes.toString());
    const refused = await skopeo.copy(img.ref, `docker://${cacheHost}/corp/team/pushed-${id}:v1`);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/unsupported|405/i);
  }, 300_000);

  it("with the upstream stopped, the cached image still pulls", async () => {
    await upstream.server.stop();
    const r = await skopeo.copy(`docker://${cacheHost}/corp/team/app-${id}:v1`, `oci:${join(work.path, "out-stale")}:v1`);
    expect(r.code, describeRun(r)).toBe(0);
    expect(readOciLayout(join(work.path, "out-stale"), "v1").manifestDigest).toBe(img.manifestDigest);
    const head = await fetch(`http://${cacheHost}/v2/corp/team/app-${id}/manifests/v1`, { method: "HEAD", headers: { accept: img.mediaType } });
    expect(head.status).toBe(200);
    expect(head.headers.get("warning")).toContain("110");
  }, 300_000);
});

describe("side by side: Distribution's proxy.remoteurl and registry-kit serve on one config", () => {
  const work = tempDir("pull-through-same-config");
  const id = randomBytes(3).toString("hex");
  let skopeo: SkopeoSandbox;
  let upstream: { server: Background; host: string };
  let img: TestImage;
  const running: Background[] = [];

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    upstream = await distributionUpstream(join(work.path, "upstream"));
    img = buildTestImage(join(work.path, "image"), { layers: 2, tag: "v1" });
    const seed = await skopeo.copy(img.ref, `docker://${upstream.host}/library/app-${id}:v1`);
    expect(seed.code, describeRun(seed)).toBe(0);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    await upstream?.server.stop();
    skopeo?.remove();
    work.remove();
  });

  it("both pull the image through with identical digests; upstream requests of each reported", async () => {
    const counts: Record<string, number> = {};
    // Two pulls each, one server after the other; counts from the upstream's access log.
    for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
      const started = await serverOn(which, join(work.path, which), { proxy: { remoteurl: `http://${upstream.host}` } });
      running.push(started.server);
      const port = started.host.split(":")[1];
      const before = accessLog(upstream.server).length;
      for (const n of [1, 2]) {
        const r = await skopeo.copy(`docker://127.0.0.1:${port}/library/app-${id}:v1`, `oci:${join(work.path, `${which}-${n}`)}:v1`);
        expect(r.code, describeRun(r)).toBe(0);
        expect(readOciLayout(join(work.path, `${which}-${n}`), "v1").manifestDigest).toBe(img.manifestDigest);
      }
      const log = accessLog(upstream.server).slice(before);
      const blobGets = img.blobDigests.map((digest) => count(log, "GET", `/blobs/${digest}`));
      counts[`${which} requests`] = log.length;
      counts[`${which} blob GETs`] = blobGets.reduce((a, b) => a + b, 0);
      // Distribution 2.8 is reported, not held to it (it fetched a blob again on the second pull here).
      if (which === "registry-kit") expect(blobGets).toEqual(img.blobDigests.map(() => 1));
      const refused = await skopeo.copy(img.ref, `docker://127.0.0.1:${port}/library/pushed-${id}:v1`);
      expect(refused.code, `${which} accepted a push in proxy mode`).not.toBe(0);
    }
    console.log(`upstream requests for two pulls: ${JSON.stringify(counts)}`);
  }, 240_000);
});

describe("a registry-kit upstream behind its token service (Bearer flow)", () => {
  const work = tempDir("pull-through-bearer");
  const id = randomBytes(3).toString("hex");
  // Always meets the password policy (upper, lower, digit): a random string alone sometimes has no digit.
  const admin = { username: "admin", password: `Adm1n-${randomBytes(12).toString("base64url")}` };
  let skopeo: SkopeoSandbox;
  let podman: ContainersSandbox;
  let upstream: Background;
  let upstreamHost = "";
  let img: TestImage;
  const running: Background[] = [];

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    podman = containersSandbox("pull-through-podman");
    const started = await serverOn("registry-kit", join(work.path, "upstream"), { registrykit: { keydirectory: join(work.path, "upstream", "keys"), tokenservice: {}, users: { admin } } });
    upstream = started.server;
    upstreamHost = started.host;
    img = buildTestImage(join(work.path, "image"), { layers: 2, sizes: [120_000, 2_000], tag: "v1" });
    const seed = await skopeo.copy(img.ref, `docker://${upstreamHost}/team/app-${id}:v1`, { destCreds: admin });
    expect(seed.code, describeRun(seed)).toBe(0);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    await upstream?.stop();
    skopeo?.remove();
    podman?.remove();
    work.remove();
  });

  async function proxyOn(which: SameConfigServer): Promise<string> {
    const started = await serverOn(which, join(work.path, which), { proxy: { remoteurl: `http://${upstreamHost}`, username: admin.username, password: admin.password } });
    running.push(started.server);
    return started.host;
  }

  it("registry-kit pulls with one token per repository; skopeo and podman pull through it", async () => {
    const cache = await proxyOn("registry-kit");
    const before = accessLog(upstream).length;
    const ref = `${cache}/team/app-${id}:v1`;
    const [copied, pulled] = await Promise.all([
      skopeo.copy(`docker://${ref}`, `oci:${join(work.path, "bearer-skopeo")}:v1`),
      podman.podman(["pull", "--tls-verify=false", ref], 180_000),
    ]);
    expect(copied.code, describeRun(copied)).toBe(0);
    expect(pulled.code, describeRun(pulled)).toBe(0);
    expect(readOciLayout(join(work.path, "bearer-skopeo"), "v1").manifestDigest).toBe(img.manifestDigest);
    const inspect = await podman.podman(["image", "inspect", "--format", "{{.Digest}}", ref]);
    expect(inspect.stdout.trim()).toBe(img.manifestDigest);

    const log = accessLog(upstream).slice(before);
    for (const digest of img.blobDigests) expect(count(log, "GET", `/blobs/${digest}`), digest).toBe(1);
    // One challenge, then one token for repository:team/app:pull, reused for every later request.
    expect(count(log, "GET", "/service/token")).toBe(1);
    expect(count(log, "GET", "/manifests/", 401)).toBe(1);
    expect(count(log, "GET", "/manifests/")).toBe(1); // both clients' tag pulls made one fetch
    console.log(`bearer upstream requests for skopeo + podman through registry-kit: ${log.length} (${JSON.stringify(log.map((r) => `${r.method} ${r.status}`))})`);
  }, 240_000);

  it("Distribution's proxy.remoteurl pulls from the registry-kit upstream too", async () => {
    const cache = await proxyOn("distribution");
    const before = accessLog(upstream).length;
    const r = await skopeo.copy(`docker://${cache}/team/app-${id}:v1`, `oci:${join(work.path, "bearer-distribution")}:v1`);
    expect(r.code, describeRun(r)).toBe(0);
    expect(readOciLayout(join(work.path, "bearer-distribution"), "v1").manifestDigest).toBe(img.manifestDigest);
    const log = accessLog(upstream).slice(before);
    expect(count(log, "GET", "/service/token")).toBeGreaterThanOrEqual(1);
    console.log(`bearer upstream requests for one skopeo pull through Distribution: ${log.length}`);
  }, 240_000);
});

describe("a Distribution 2.8 upstream behind token auth (Bearer flow against Distribution)", () => {
  const work = tempDir("pull-through-dist-token");
  const id = randomBytes(3).toString("hex");
  const owner = { username: "owner", password: `Owner-${randomBytes(6).toString("hex")}` };
  const reader = { username: "reader", password: `Reader-${randomBytes(6).toString("hex")}` };
  let tokens: TokenServiceFixture;
  let upstream: Background;
  let upstreamHost = "";
  let cache: Background;
  let cacheHost = "";
  let skopeo: SkopeoSandbox;
  let podman: ContainersSandbox;
  let img: TestImage;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    podman = containersSandbox("pt-dist-token");
    tokens = await startTokenService({
      users: { owner: { password: owner.password }, reader: { password: reader.password } },
      rules: [
        { match: { account: "owner", type: "repository", name: "team/*" }, actions: ["*"] },
        { match: { account: "reader", type: "repository", name: "team/*" }, actions: ["pull"] },
      ],
      x5c: false,
      allowAnonymous: false,
    });
    const started = await serverOn("distribution", join(work.path, "upstream"), {
      log: { level: "info", formatter: "json", accesslog: { disabled: false } },
      auth: { token: { realm: tokens.realm, service: tokens.service, issuer: tokens.issuer, rootcertbundle: tokens.rootCertBundle } },
    });
    upstream = started.server;
    upstreamHost = started.host;
    img = buildTestImage(join(work.path, "image"), { layers: 2, sizes: [90_000, 3_000], tag: "v1" });
    const seed = await skopeo.copy(img.ref, `docker://${upstreamHost}/team/tool-${id}:v1`, { destCreds: owner });
    expect(seed.code, describeRun(seed)).toBe(0);
    // The cache pulls with the read-only account's credentials; the token service is on another origin (another
    // port), as Docker Hub's auth.docker.io is, so its realm must be listed for them to go there (issue 41, item 2).
    const cached = await serverOn("registry-kit", join(work.path, "cache"), {
      proxy: { remoteurl: `http://${upstreamHost}`, username: reader.username, password: reader.password, realms: [tokens.realm] },
    });
    cache = cached.server;
    cacheHost = cached.host;
  }, 300_000);

  afterAll(async () => {
    await cache?.stop();
    await upstream?.stop();
    await tokens?.close();
    skopeo?.remove();
    podman?.remove();
    work.remove();
  });

  it("skopeo and podman pull at once through registry-kit: one upstream GET per blob, tokens from the upstream's realm", async () => {
    const before = accessLog(upstream).length;
    const issuedBefore = tokens.issued.length;
    const ref = `${cacheHost}/team/tool-${id}:v1`;
    const [copied, pulled] = await Promise.all([
      skopeo.copy(`docker://${ref}`, `oci:${join(work.path, "through-skopeo")}:v1`),
      podman.podman(["pull", "--tls-verify=false", ref], 180_000),
    ]);
    expect(copied.code, describeRun(copied)).toBe(0);
    expect(pulled.code, describeRun(pulled)).toBe(0);
    expect(readOciLayout(join(work.path, "through-skopeo"), "v1").manifestDigest).toBe(img.manifestDigest);
    const log = accessLog(upstream).slice(before);
    for (const digest of img.blobDigests) expect(count(log, "GET", `/blobs/${digest}`), `${digest}\n${JSON.stringify(log)}`).toBe(1);
    const issued = tokens.issued.slice(issuedBefore).filter((t) => t.status === 200);
    expect(issued.length).toBeGreaterThanOrEqual(1);
    // Every token the cache got was the reader's, for this repository, pull only.
    for (const t of issued) expect(t.claims?.sub).toBe("reader");
    console.log(`Distribution token-auth upstream: ${log.length} requests reached it, ${issued.length} token(s) issued (${JSON.stringify(log.map((r) => `${r.method} ${r.status}`))})`);
  }, 240_000);
});
