/**
 * One real skopeo push and pull with token auth against a registry served by
 * each runtime of the matrix: Node 22 and 24 (`serve` from registry-kit/node),
 * Bun (`Bun.serve`) and Deno (`Deno.serve`), all running
 * test/runtime/server.ts (registry + token service on one port, memory
 * storage), and workerd (miniflare) running test/runtime/worker.ts bundled
 * by esbuild with node-only code kept out. Then examples/workers as a user
 * deploys it: bundled by esbuild as wrangler does, in workerd with a local
 * R2 bucket (registry, token service and users all on R2), an account made
 * through the users API, a push and pull with a layer over one R2 part, and a
 * pull again after a restart. The binaries are the ones `scripts/runtimes.mjs`
 * fetches.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { build, type BuildOptions, type Metafile, type Plugin } from "esbuild";
import { generateSigningKeyPem } from "../../src/auth/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const ROOT = resolve(import.meta.dirname, "../..");
const SERVER = join(ROOT, "test/runtime/server.ts");
const alice = { username: "alice", password: "alice-Secret-1" };

/** How each runtime runs the TypeScript server file. */
const RUN_TS: Record<string, string[]> = {
  "node@22": ["--import", "tsx"],
  "node@24": ["--import", "tsx"],
  bun: [],
  deno: ["--sloppy-imports"],
  workerd: [],
};

function binaries(): Record<string, string[]> {
  const r = spawnSync(process.execPath, [join(ROOT, "scripts/runtimes.mjs"), "paths"], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`scripts/runtimes.mjs paths failed:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, string[]>;
}

/** What wrangler does for a Worker with `nodejs_compat`: ESM for workerd, `node:*` left to the runtime. */
const WORKERS_BUILD: BuildOptions = {
  bundle: true,
  format: "esm",
  platform: "neutral",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
  external: ["node:*", "crypto"], // bcryptjs imports "crypto"; nodejs_compat provides it
  minify: true,
  metafile: true,
  logLevel: "silent",
};

/** The Node built-ins workerd's `nodejs_compat` provides that a bundle may leave as imports. */
const NODEJS_COMPAT = new Set(["crypto", "node:crypto", "node:buffer", "node:stream", "node:util", "node:events", "node:async_hooks", "node:zlib"]);

/** `registry-kit/<sub>` to its source, as the repository's tsconfig paths do: the example bundles without a build of dist/. */
const publicNames: Plugin = {
  name: "registry-kit-sources",
  setup(b) {
    b.onResolve({ filter: /^registry-kit(\/.*)?$/ }, (args) => ({ path: join(ROOT, "src", args.path.slice("registry-kit".length) || ".", "index.ts") }));
  },
};

/** Inputs of a bundle that are node-only code of src/, and imports it leaves to the runtime beyond nodejs_compat's. */
function nodeOnly(metafile: Metafile): { inputs: string[]; imports: string[] } {
  const inputs = Object.keys(metafile.inputs).filter((f) => /^src\/(node|server|cli|storage\/fs)\//.test(f) || f.endsWith(".node.ts"));
  const imports = Object.values(metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external && !NODEJS_COMPAT.has(i.path)).map((i) => i.path));
  return { inputs, imports };
}

interface Server {
  url: string;
  host: string;
  child: ChildProcess;
  log: () => string;
}

function startServer(command: string[], script: string, extra: { args?: string[]; env?: Record<string, string> } = {}): Promise<Server> {
  const [bin, ...args] = command as [string, ...string[]];
  const env = { ...process.env, RK_PASSWORD: alice.password, ...extra.env };
  const child = spawn(bin, [...args, script, ...(extra.args ?? [])], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const log = () => out;
  return new Promise((resolvePromise, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (http:\/\/127\.0\.0\.1:(\d+))/.exec(out);
      if (m) resolvePromise({ url: m[1]!, host: `127.0.0.1:${m[2]}`, child, log });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    child.once("exit", (code) => reject(new Error(`${bin} exited (${code}) before listening:\n${out}`)));
    child.once("error", reject);
  });
}

describe("skopeo push and pull with token auth, server on each runtime", () => {
  const runtimes = binaries();
  let skopeo: SkopeoSandbox;
  let img: TestImage;
  const work = tempDir("runtimes-skopeo");
  const bundle = join(work.path, "worker.mjs");

  beforeAll(async () => {
    // As a user would bundle for Workers: no node-only module of src/ may end up inside.
    const built = await build({ ...WORKERS_BUILD, entryPoints: [join(ROOT, "test/runtime/worker.ts")], outfile: bundle });
    expect(nodeOnly(built.metafile!)).toEqual({ inputs: [], imports: [] });
    skopeo = skopeoSandbox();
    img = buildTestImage(join(work.path, "src"), { sizes: [4096, 300_000] });
  });
  afterAll(() => {
    skopeo?.remove();
    work.remove();
  });

  for (const id of Object.keys(RUN_TS)) {
    it(`${id}: a Bearer challenge, then skopeo pushes as alice and pulls back the same digests; the web page shows the image`, async () => {
      const command = id === "workerd" ? runtimes["node@24"] : runtimes[id];
      expect(command, `scripts/runtimes.mjs has no ${id}`).toBeDefined();
      const server =
        id === "workerd"
          ? await startServer([runtimes["node@24"]![0]!, join(ROOT, "test/runtime/miniflare.mjs")], bundle)
          : await startServer([command![0]!, ...command!.slice(1), ...RUN_TS[id]!], SERVER);
      try {
        const challenge = await fetch(`${server.url}/v2/`);
        await challenge.arrayBuffer();
        expect(challenge.status).toBe(401);
        expect(challenge.headers.get("www-authenticate")).toBe(`Bearer realm="${server.url}/token",service="registry.runtime"`);

        const dest = `docker://${server.host}/alice/app:v1`;
        const t0 = performance.now();
        const push = await skopeo.copy(img.ref, dest, { destCreds: alice });
        const t1 = performance.now();
        expect(push.code, `${describeRun(push)}\n${server.log()}`).toBe(0);
        const back = join(work.path, `${id.replace("@", "")}-back`);
        const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: alice });
        const t2 = performance.now();
        expect(pull.code, `${describeRun(pull)}\n${server.log()}`).toBe(0);
        const got = readOciLayout(back, "v1");
        expect(got.manifestDigest).toBe(img.manifestDigest);
        expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
        for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(name);
        // The wrong password is refused: the token service is really in the loop.
        const refused = await skopeo.copy(img.ref, `docker://${server.host}/alice/app:v2`, { destCreds: { ...alice, password: "wrong" } });
        expect(refused.code, describeRun(refused)).not.toBe(0);
        expect(server.log()).not.toContain("DEP0204");
        // The web page on this runtime: alice signs in and sees the image she pushed.
        const signIn = await fetch(`${server.url}/ui/sign-in`, { method: "POST", body: new URLSearchParams({ username: alice.username, password: alice.password }), redirect: "manual" });
        await signIn.arrayBuffer();
        expect(signIn.status, server.log()).toBe(303);
        const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
        const imagePage = await fetch(`${server.url}/ui/image?name=alice%2Fapp&ref=v1`, { headers: { cookie } });
        const html = await imagePage.text();
        expect(imagePage.status, html.slice(0, 2000)).toBe(200);
        expect(html).toContain(img.manifestDigest);
        expect(imagePage.headers.get("content-security-policy")).toContain("default-src 'none'");
        console.log(`[runtimes-skopeo] ${id}: push ${Math.round(t1 - t0)} ms, pull ${Math.round(t2 - t1)} ms`);
      } finally {
        server.child.kill("SIGTERM");
      }
    });
  }
  it("examples/workers on workerd with a local R2 bucket: bundle node-free; an account made through the users API pushes and pulls; the image is still there after a restart", async () => {
    const exampleBundle = join(work.path, "example", "index.mjs");
    const built = await build({ ...WORKERS_BUILD, entryPoints: [join(ROOT, "examples/workers/src/index.ts")], outfile: exampleBundle, plugins: [publicNames] });
    expect(nodeOnly(built.metafile!)).toEqual({ inputs: [], imports: [] });
    const minified = readFileSync(exampleBundle);
    console.log(`[runtimes-skopeo] examples/workers bundle: ${(minified.byteLength / 1024).toFixed(0)} KiB minified, ${(gzipSync(minified).byteLength / 1024).toFixed(0)} KiB gzip`);

    const { privateKey } = await generateSigningKeyPem({ alg: "ES256" });
    const admin = { username: "admin", password: "Admin-Secret-1" };
    const bindings = { SIGNING_KEY: privateKey, UPLOAD_SECRET: "0123456789abcdef0123456789abcdef", ADMIN_PASSWORD: admin.password };
    const persist = join(work.path, "r2");
    const start = () =>
      startServer([runtimes["node@24"]![0]!, join(ROOT, "test/runtime/miniflare.mjs")], exampleBundle, {
        args: ["--r2", "BUCKET", "--persist", persist],
        env: { RK_BINDINGS: JSON.stringify(bindings) },
      });
    const big = buildTestImage(join(work.path, "big"), { sizes: [4096, 9 * 1024 * 1024] });
    const dest = (host: string) => `docker://${host}/alice/app:v1`;
    let server = await start();
    try {
      const challenge = await fetch(`${server.url}/v2/`);
      await challenge.arrayBuffer();
      expect(challenge.status, server.log()).toBe(401);
      expect(challenge.headers.get("www-authenticate")).toBe(`Bearer realm="${server.url}/token",service="registry-kit-workers"`);
      const basic = `Basic ${btoa(`${admin.username}:${admin.password}`)}`;
      const created = await fetch(`${server.url}/api/users`, {
        method: "POST",
        headers: { authorization: basic, "content-type": "application/json" },
        body: JSON.stringify({ username: alice.username, email: "alice@example.test", password: alice.password }),
      });
      expect(created.status, `${await created.text()}\n${server.log()}`).toBe(201);

      const t0 = performance.now();
      const push = await skopeo.copy(big.ref, dest(server.host), { destCreds: alice });
      const t1 = performance.now();
      expect(push.code, `${describeRun(push)}\n${server.log()}`).toBe(0);
      const back = join(work.path, "example-back");
      const pull = await skopeo.copy(dest(server.host), `oci:${back}:v1`, { srcCreds: alice });
      const t2 = performance.now();
      expect(pull.code, `${describeRun(pull)}\n${server.log()}`).toBe(0);
      expect(readOciLayout(back, "v1").layerDigests).toEqual(big.layers.map((l) => l.digest));
      console.log(`[runtimes-skopeo] examples/workers (R2): push ${Math.round(t1 - t0)} ms, pull ${Math.round(t2 - t1)} ms (layers 4 KiB + 9 MiB)`);

      // A new workerd on the same local R2: the image and the account are still there.
      server.child.kill("SIGTERM");
      await new Promise((r) => server.child.once("exit", r));
      server = await start();
      const again = join(work.path, "example-again");
      const pull2 = await skopeo.copy(dest(server.host), `oci:${again}:v1`, { srcCreds: alice });
      expect(pull2.code, `${describeRun(pull2)}\n${server.log()}`).toBe(0);
      const got = readOciLayout(again, "v1");
      expect(got.manifestDigest).toBe(big.manifestDigest);
      for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(name);
      // Alice's token covers alice/*, not another account's repositories.
      const denied = await skopeo.copy(img.ref, `docker://${server.host}/admin/app:v1`, { destCreds: alice });
      expect(denied.code, describeRun(denied)).not.toBe(0);
    } finally {
      server.child.kill("SIGTERM");
    }
  });
});
