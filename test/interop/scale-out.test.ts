/**
 * Scale-out with real programs: FOUR `registry-kit serve` processes (the real
 * CLI, config.yml with `storage.s3`) on one radosgw bucket, sharing
 * `http.secret` and the token signing key files, behind nginx round-robin.
 * skopeo and the registry-kit client push twelve images that share layers,
 * all at once; the client's chunked uploads put the PATCHes of one upload on
 * different processes (checked from each process's own access log). Then every
 * image is pulled back through nginx and straight from each process, and
 * `skopeo inspect --raw` must return the exact bytes pushed.
 *
 * Fails (never skips) when radosgw, nginx or skopeo is missing or does not
 * start. Everything started here is stopped in afterAll.
 */
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, memoryImageStore, type RegistryClient } from "../../src/client/index.js";
import { readOciLayout } from "./helpers/image.js";
import { describeRun, freePort, tempDir } from "./helpers/process.js";
import {
  makeImage, memoryStoreOf, randomLayer, startBackends, startNginx, startRadosgw, uploadsByBackend, writeOciLayout, writeSharedKeys,
  type Backend, type Nginx, type RgwServer, type SharedImage,
} from "./helpers/scale-out.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const PROCESSES = 4;
const BUCKET = "registry-kit-scale-out";
const admin = { username: "admin", password: "Adm1n-Scale-Out-Pass" };
const user = { username: "scaleuser", password: "Sc4le-User-Pass" };
/** The client's chunk size: the shared base layer (1.5 MiB) takes 6 PATCHes. */
const CHUNK = 256 * 1024;

const digestOf = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** Run `tasks` with at most `limit` at a time; every result, in order. */
async function pool<T>(limit: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  }));
  return results;
}

describe(`scale-out: ${PROCESSES} registry-kit serve processes on one radosgw bucket behind nginx`, () => {
  const work = tempDir("scale-out");
  const run = randomBytes(3).toString("hex");
  let rgw: RgwServer | undefined;
  let backends: Backend[] = [];
  let nginx: Nginx | undefined;
  let skopeo: SkopeoSandbox | undefined;
  let client: RegistryClient;

  // 12 images: all share the base layer, every other one a second shared layer, each has its own layer
  const base = randomLayer(1_500_000, "base");
  const mid = randomLayer(700_000, "mid");
  const images: SharedImage[] = Array.from({ length: 12 }, (_, i) =>
    makeImage(`img${i}`, [base, ...(i % 2 === 0 ? [mid] : []), randomLayer(100_000 + i * 120_000, `own${i}`)]));
  /** Pushed by skopeo as the user, into the user's namespace. */
  const bySkopeo = images.slice(0, 6).map((img, i) => ({ img, repo: `${user.username}/sk-${run}-${i}` }));
  /** Pushed by the client as the administrator, in chunks. */
  const byClient = images.slice(6).map((img, i) => ({ img, repo: `admin/cl-${run}-${i}` }));
  const layout = join(work.path, "layout");

  const stopAll = async () => {
    await nginx?.stop();
    await Promise.all(backends.map((b) => b.proc.stop(3_000)));
    await rgw?.stop();
    skopeo?.remove();
  };
  const logs = () =>
    backends.map((b) => `--- process #${b.index} (port ${b.port}) ---\n${b.proc.output().slice(-3000)}`).join("\n") +
    (nginx ? `\n--- nginx ---\n${nginx.proc.output().slice(-2000)}` : "");

  beforeAll(async () => {
    try {
      skopeo = skopeoSandbox();
      writeOciLayout(layout, images);
      rgw = await startRadosgw();
      await rgw.createBucket(BUCKET);
      const keys = await writeSharedKeys(join(work.path, "shared-keys"));
      const lbPort = await freePort();
      backends = await startBackends(PROCESSES, {
        work: work.path, rgw, bucket: BUCKET, rootDirectory: `scale-${run}`, keys,
        publicUrl: `http://127.0.0.1:${lbPort}`, adminPassword: admin.password,
      });
      nginx = await startNginx(backends.map((b) => b.port), { port: lbPort });
      client = createClient();
      await client.login(nginx.url, admin.username, admin.password);
    } catch (error) {
      await stopAll();
      throw error;
    }
  }, 180_000);

  afterAll(async () => {
    await stopAll();
    work.remove();
  }, 60_000);

  it("every process runs on the bucket and names nginx in its challenge", async () => {
    expect(backends).toHaveLength(PROCESSES);
    for (const b of backends) {
      expect(b.proc.output()).toContain(`storage         s3 bucket ${BUCKET} at ${rgw!.endpoint}, prefix scale-${run}/`);
      const res = await fetch(`${b.url}/v2/`);
      await res.arrayBuffer();
      expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="${nginx!.url}/service/token",service="registry-kit"`);
    }
    // the administrator was created once, by the first process
    expect(backends.filter((b) => b.proc.output().includes(`administrator   "admin" created`)).map((b) => b.index)).toEqual([0]);
  });

  it("a user created through nginx signs in on every process, and every process signs with the same key", async () => {
    const created = await fetch(`${nginx!.url}/api/users`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString("base64")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ username: user.username, email: "scale@example.test", password: user.password }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const kids = new Set<string>();
    for (const b of backends) {
      const res = await fetch(`${b.url}/service/token?service=registry-kit&scope=repository:${user.username}/x:pull,push`, {
        headers: { authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}` },
      });
      expect(res.status, `process #${b.index}`).toBe(200);
      const { token } = (await res.json()) as { token: string };
      const [header, payload] = token.split(".").slice(0, 2).map((p) => JSON.parse(Buffer.from(p, "base64url").toString()) as Record<string, unknown>);
      kids.add(String(header!.kid));
      expect(payload!.access, `process #${b.index}`).toEqual([{ type: "repository", name: `${user.username}/x`, actions: ["pull", "push"] }]);
    }
    expect(kids.size).toBe(1);
  });

  it("skopeo and the client push 12 images sharing layers at once; uploads continue across processes; no errors", async () => {
    const store = await memoryStoreOf(images);
    const started = Date.now();
    const [skopeoRuns, clientRuns] = await Promise.all([
      Promise.all(bySkopeo.map(({ img, repo }) =>
        skopeo!.copy(`oci:${layout}:${img.name}`, `docker://${nginx!.host}/${repo}:v1`, { destCreds: user }))),
      Promise.allSettled(byClient.map(({ img, repo }) =>
        client.push(`${nginx!.host}/${repo}:v1`, store, { name: img.name, chunkSize: CHUNK }))),
    ]);
    const seconds = (Date.now() - started) / 1000;
    for (const r of skopeoRuns) expect(r.code, `${describeRun(r)}\n${logs()}`).toBe(0);
    clientRuns.forEach((r, i) => {
      expect(r.status, `client push ${byClient[i]!.repo}: ${r.status === "rejected" ? String(r.reason) : ""}\n${logs()}`).toBe("fulfilled");
      if (r.status === "fulfilled") expect(r.value.digest).toBe(byClient[i]!.img.manifestDigest);
    });

    const uploads = uploadsByBackend(backends);
    const spread = [...uploads.values()].filter((s) => s.size >= 2);
    const widest = Math.max(...[...uploads.values()].map((s) => s.size));
    const perProcess = backends.map((b) => b.accessLog().length);
    const patches = backends.map((b) => b.accessLog().filter((l) => l.method === "PATCH").length);
    const errors = backends.flatMap((b) => b.accessLog().filter((l) => l.status >= 500 || l.status === 0).map((l) => `#${b.index} ${l.method} ${l.target} ${l.status}`));
    const nginxErrors = nginx!.accessLog().filter((l) => l.status >= 500 || l.status === 0);
    console.log(
      `[scale-out] pushed ${images.length} images (${bySkopeo.length} skopeo, ${byClient.length} client chunked) in ${seconds.toFixed(1)} s; ` +
      `requests per process ${perProcess.join("/")}, PATCHes per process ${patches.join("/")}; ` +
      `${uploads.size} uploads seen, ${spread.length} served by ≥ 2 processes (widest: ${widest}); 5xx: ${errors.length + nginxErrors.length}`,
    );
    expect(errors, logs()).toEqual([]);
    expect(nginxErrors).toEqual([]);
    expect(perProcess.every((n) => n > 0), `requests per process: ${perProcess.join("/")}`).toBe(true);
    expect(spread.length).toBeGreaterThan(0);
    expect(widest).toBeGreaterThanOrEqual(2);
  });

  it("every image pulls back byte-identical through nginx, with skopeo and with the client, and from each process", async () => {
    const all = [...bySkopeo, ...byClient];
    // skopeo inspect --raw: the exact bytes pushed
    const raws = await pool(6, all.map(({ repo }) => () => skopeo!.inspectRaw(`docker://${nginx!.host}/${repo}:v1`, { creds: admin })));
    raws.forEach((raw, i) => expect(raw.equals(all[i]!.img.manifestBytes), `${all[i]!.repo}: manifest bytes differ`).toBe(true));

    let verified = 0;
    // what skopeo pushed, the client pulls (verifying every digest as it streams) ...
    await pool(6, bySkopeo.map(({ img, repo }) => async () => {
      const local = memoryImageStore();
      const pulled = await client.pull(`${nginx!.host}/${repo}:v1`, local);
      expect(pulled.manifest.digest).toBe(img.manifestDigest);
      for (const blob of [img.config, ...img.layers]) {
        const got = local.blobs.get(blob.digest);
        expect(got && digestOf(got), `${repo} ${blob.digest}`).toBe(blob.digest);
        expect(Buffer.from(got!).equals(blob.bytes)).toBe(true);
        verified++;
      }
      verified++; // the manifest
    }));
    // ... and what the client pushed, skopeo pulls into an OCI layout
    const pulls = await pool(6, byClient.map(({ repo }, i) => () =>
      skopeo!.copy(`docker://${nginx!.host}/${repo}:v1`, `oci:${join(work.path, `back-${i}`)}:v1`, { srcCreds: admin })));
    pulls.forEach((r, i) => {
      expect(r.code, describeRun(r)).toBe(0);
      const { img } = byClient[i]!;
      const got = readOciLayout(join(work.path, `back-${i}`), "v1");
      expect(got.manifestDigest).toBe(img.manifestDigest);
      expect(got.configDigest).toBe(img.config.digest);
      expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
      for (const [digest, content] of got.blobFileDigests) {
        expect(content).toBe(digest);
        verified++;
      }
      verified++; // the manifest
    });

    // every process, asked directly, serves every manifest: one token from nginx's realm, good on all of them
    const scopes = all.map(({ repo }) => `scope=${encodeURIComponent(`repository:${repo}:pull`)}`).join("&");
    const tokenRes = await fetch(`${nginx!.url}/service/token?service=registry-kit&${scopes}`, {
      headers: { authorization: `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString("base64")}` },
    });
    expect(tokenRes.status).toBe(200);
    const { token } = (await tokenRes.json()) as { token: string };
    let direct = 0;
    for (const b of backends) {
      for (const { img, repo } of all) {
        const res = await fetch(`${b.url}/v2/${repo}/manifests/v1`, {
          headers: { authorization: `Bearer ${token}`, accept: "application/vnd.oci.image.manifest.v1+json" },
        });
        const bytes = Buffer.from(await res.arrayBuffer());
        expect(res.status, `process #${b.index} ${repo}`).toBe(200);
        expect(bytes.equals(img.manifestBytes), `process #${b.index} ${repo}`).toBe(true);
        expect(res.headers.get("docker-content-digest")).toBe(img.manifestDigest);
        direct++;
      }
    }
    console.log(`[scale-out] pulled back ${all.length} images (${bySkopeo.length} by the client, ${byClient.length} by skopeo); ` +
      `${raws.length} manifests byte-identical by skopeo inspect --raw; ${verified} blob and manifest digests verified on pull; ` +
      `${direct} direct manifest reads (${backends.length} processes × ${all.length}) byte-identical`);
    const errors = backends.flatMap((b) => b.accessLog().filter((l) => l.status >= 500 || l.status === 0));
    expect(errors, logs()).toEqual([]);
  });
});
