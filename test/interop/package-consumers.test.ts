/**
 * The package as its consumers get it: one build of the JavaScript (tsup, the
 * package's own config, into a staging copy; declarations are left out to
 * keep CI time small: `npm run check:types` checks those), one `npm pack`,
 * and the tarball installed into a fresh project with npm. From there:
 *
 * - test/interop/consumer/consumer.mjs (plain ESM) runs on Node (the one that
 *   runs vitest: 20 in CI; and 22, 24), Bun and Deno (which resolves the bare
 *   names from that project's node_modules): a registry with token auth on the
 *   runtime's own server, an image pushed and pulled back with the package's
 *   client, every digest checked, a wrong password refused;
 * - test/interop/consumer/consumer.cjs runs on Node: every public subpath
 *   loads with require(), and the token flow with fetch;
 * - examples/deno (npm install, `deno task start`) and examples/bun
 *   (`bun install`, `bun run start`), each installing the tarball: an
 *   account made through the users API, a skopeo push and pull with its
 *   password, a push outside its namespace refused, and after a restart the
 *   image, the account and the signing key are still there (fs storage);
 * - `deno check` of examples/deno (against the sources: the tarball built
 *   here has no declarations);
 * - examples/workers bundled by esbuild as wrangler does, from the installed
 *   tarball (not the sources): only imports `nodejs_compat` provides, its
 *   size printed, and the bundle in workerd (miniflare, local R2) serving an
 *   account made through the users API a skopeo push and pull.
 *
 * The runtimes are the ones scripts/runtimes.mjs fetches.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { gzipSync } from "node:zlib";
import { build as esbuild } from "esbuild";
import { build } from "tsup";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import tsupConfig from "../../tsup.config.js";
import { generateSigningKeyPem } from "../../src/auth/index.js";
import { runtimeNames } from "../package/export-names.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, requireTool, run, runOk, startBackground, tempDir, waitFor, type Background } from "./helpers/process.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const ROOT = resolve(import.meta.dirname, "../..");
const CONSUMER = join(ROOT, "test/interop/consumer");
const npm = requireTool("npm");
const install = ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"];

function binaries(): Record<string, string[]> {
  const r = spawnSync(process.execPath, [join(ROOT, "scripts/runtimes.mjs"), "paths"], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`scripts/runtimes.mjs paths failed:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, string[]>;
}

/** The `RESULT {…}` line a consumer program prints last. */
function resultOf(r: { stdout: string }): Record<string, unknown> {
  const line = r.stdout.split("\n").findLast((l) => l.startsWith("RESULT "));
  if (!line) throw new Error("no RESULT line");
  return JSON.parse(line.slice("RESULT ".length)) as Record<string, unknown>;
}

/** A copy of examples/<name> whose registry-kit dependency is the tarball. */
function exampleCopy(name: string, into: string, tarball: string): string {
  const dir = join(into, name);
  mkdirSync(dir, { recursive: true });
  for (const file of ["server.ts", "package.json", "deno.json"]) {
    if (existsSync(join(ROOT, "examples", name, file))) cpSync(join(ROOT, "examples", name, file), join(dir, file));
  }
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  expect(pkg.dependencies["registry-kit"]).toBe("file:../..");
  pkg.dependencies["registry-kit"] = `file:${tarball}`;
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
  return dir;
}

describe("the packed package in a consumer's project", () => {
  const runtimes = binaries();
  const work = tempDir("consumers");
  let tarball: string;
  let project: string;
  let packed: string[];

  beforeAll(async () => {
    const stage = join(work.path, "stage");
    mkdirSync(stage);
    for (const file of ["package.json", "README.md", "CHANGELOG.md", "LICENSE", "bin"]) cpSync(join(ROOT, file), join(stage, file), { recursive: true });
    await build({ ...(tsupConfig as object), outDir: join(stage, "dist"), dts: false, silent: true });
    const pack = await runOk(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", work.path], { cwd: stage });
    const [info] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
    tarball = join(work.path, info.filename);
    packed = info.files.map((f) => f.path);

    project = join(work.path, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ private: true, type: "module", dependencies: { "registry-kit": `file:${tarball}` } }));
    await runOk(npm, install, { cwd: project, timeoutMs: 180_000 });
    for (const file of ["consumer.mjs", "consumer.cjs"]) cpSync(join(CONSUMER, file), join(project, file));
  }, 300_000);
  afterAll(() => work.remove());

  it("the tarball holds the build, the CLI and the documents, nothing of src/ or test/", () => {
    expect(packed).toContain("dist/index.js");
    expect(packed).toContain("dist/index.cjs");
    expect(packed).toContain("dist/storage/fs/index.js");
    expect(packed).toContain("bin/registry-kit.mjs");
    // The command line as one file (scripts/cli-bundle.ts), with the licenses of what it inlines.
    expect(packed).toContain("dist/cli/registry-kit.cjs");
    expect(packed).toContain("dist/cli/code-cache.mjs");
    expect(packed).toContain("dist/cli/THIRD-PARTY-LICENSES.txt");
    expect(packed.filter((f) => !/^(dist\/|bin\/|package\.json$|README\.md$|CHANGELOG\.md$|LICENSE$)/.test(f))).toEqual([]);
  });

  const esm: [string, () => string[]][] = [
    [`node ${process.versions.node} (vitest's)`, () => [process.execPath]],
    ["node@22", () => runtimes["node@22"]!],
    ["node@24", () => runtimes["node@24"]!],
    ["bun", () => [runtimes.bun![0]!]],
    // No --node-modules-dir flag: with a package.json beside it, Deno resolves bare names from its node_modules.
    ["deno", () => [runtimes.deno![0]!, "run", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", "--allow-sys"]],
  ];
  for (const [label, command] of esm) {
    it(`${label}: ESM imports, a registry with token auth on the runtime's server, the client pushes and pulls back the same digests`, async () => {
      const [bin, ...args] = command() as [string, ...string[]];
      const r = await run(bin, [...args, "consumer.mjs"], { cwd: project, timeoutMs: 60_000 });
      expect(r.code, describeRun(r)).toBe(0);
      const result = resultOf(r);
      expect(String(result.runtime)).toMatch(label.startsWith("node@") ? `node ${label.slice(5)}.` : label.split(" ")[0]!);
      expect(result.challenge).toMatch(/^401 Bearer realm="http:\/\/127\.0\.0\.1:\d+\/token",service="consumer\.test"$/);
      expect(result.pushedDigest).toBe(result.manifestDigest);
      expect(result.pulledDigest).toBe(result.manifestDigest);
      expect(result.imageId).toBe(result.configDigest);
      expect(result.layerBack).toBe(result.layerDigest);
      expect(result.uploaded).toBe(2);
      expect(result.refused).toBe("401 UNAUTHORIZED");
      expect(r.stderr, "no deprecation or other warning").not.toMatch(/DEP0|Warning/);
    });
  }

  it("the installed package's registry-kit command runs (the one-file CLI, from node_modules/.bin)", async () => {
    const r = await run(join(project, "node_modules", ".bin", "registry-kit"), ["--version"], { cwd: project, timeoutMs: 30_000 });
    expect(r.code, describeRun(r)).toBe(0);
    expect(r.stdout.trim()).toBe((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version);
  });

  it(`node ${process.versions.node}: require() of every public subpath gives the names the sources export, and the token flow with fetch`, async () => {
    const r = await run(process.execPath, ["consumer.cjs"], { cwd: project, timeoutMs: 60_000 });
    expect(r.code, describeRun(r)).toBe(0);
    const result = resultOf(r);
    const loaded = result.loaded as Record<string, string[]>;
    // Every subpath but ./package.json and the import-only ./testing (vitest refuses require()), which fails to resolve.
    const offered = Object.keys((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> }).exports)
      .filter((s) => s !== "./package.json" && s !== "./testing")
      .map((s) => (s === "." ? "registry-kit" : `registry-kit/${s.slice(2)}`));
    expect(Object.keys(loaded).sort()).toEqual(offered.sort());
    expect(result.testingRequire).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED");
    for (const [id, names] of Object.entries(loaded)) {
      expect(names, id).toEqual(await runtimeNames(id === "registry-kit" ? "." : `./${id.slice("registry-kit/".length)}`));
    }
    expect(result.token).toBe(200);
    expect(result.blobPush).toBe(`201 ${result.blobDigest}`);
    expect(result.manifestPut).toBe(`201 ${result.manifestDigest}`);
    expect(result.manifestBack).toBe(result.manifestDigest);
    expect(result.blobBack).toBe(result.blobDigest);
    expect(result.anonymous).toBe(401);
  });

  // The tarball carries no declarations (see above), so the types are checked against the sources, as the root
  // tsconfig does for the Node examples (which leaves this one out: Deno's globals are Deno's).
  it("examples/deno type-checks with deno check, registry-kit/* mapped to the sources", async () => {
    const dir = join(work.path, "deno-check");
    mkdirSync(dir);
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    const rootPkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, dependencies: { ...rootPkg.dependencies, "@types/node": rootPkg.devDependencies["@types/node"] } }));
    writeFileSync(join(dir, "deno.json"), JSON.stringify({
      nodeModulesDir: "manual",
      imports: { "registry-kit": join(ROOT, "src/index.ts"), "registry-kit/": `${join(ROOT, "src")}/` },
      // The sources import "./x.js" for "./x.ts", as NodeNext wants.
      unstable: ["sloppy-imports"],
    }));
    const r = await run(runtimes.deno![0]!, ["check", "--quiet", "--config", join(dir, "deno.json"), join(ROOT, "examples/deno/server.ts")], { cwd: dir, timeoutMs: 120_000 });
    expect(r.code, describeRun(r)).toBe(0);
  });

  describe("the examples on the installed tarball, with skopeo", () => {
    let skopeo: SkopeoSandbox;
    let img: TestImage;
    const admin = { username: "admin", password: "Admin-Secret-123" };
    const bob = { username: "bob", password: "Bob-Secret-12345" };

    beforeAll(() => {
      skopeo = skopeoSandbox();
      img = buildTestImage(join(work.path, "image"), { sizes: [4096, 300_000] });
    });
    afterAll(() => skopeo?.remove());

    /** As a user would: the administrator makes bob through /api/users; bob pushes the image with skopeo and pulls it back whole. */
    const bobRoundTrip = async (url: string, dir: string, output: () => string): Promise<void> => {
      const host = url.slice("http://".length);
      const created = await fetch(`${url}/api/users`, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString("base64")}`, "content-type": "application/json" },
        body: JSON.stringify({ username: bob.username, password: bob.password, email: "bob@example.com" }),
      });
      expect(created.status, `${await created.text()}\n${output()}`).toBe(201);
      const push = await skopeo.copy(img.ref, `docker://${host}/bob/app:v1`, { destCreds: bob });
      expect(push.code, `${describeRun(push)}\n${output()}`).toBe(0);
      const pull = await skopeo.copy(`docker://${host}/bob/app:v1`, `oci:${join(dir, "back")}:v1`, { srcCreds: bob });
      expect(pull.code, `${describeRun(pull)}\n${output()}`).toBe(0);
      const got = readOciLayout(join(dir, "back"), "v1");
      expect(got.manifestDigest).toBe(img.manifestDigest);
      expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
      for (const [file, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(file);
    };

    const examples: [string, (dir: string) => Promise<string[]>][] = [
      ["deno", async (dir) => {
        await runOk(npm, install, { cwd: dir, timeoutMs: 180_000 });
        return [runtimes.deno![0]!, "task", "start"];
      }],
      ["bun", async (dir) => {
        // Bun's own installer, as the example's README says.
        await runOk(runtimes.bun![0]!, ["install", "--no-save"], { cwd: dir, timeoutMs: 180_000 });
        return [runtimes.bun![0]!, "run", "start"];
      }],
    ];
    it("examples/workers bundled from the tarball: only imports nodejs_compat provides; in workerd with local R2 a user made through /api/users pushes and pulls with skopeo", async () => {
      // Bundled in the consumer's project, so every registry-kit/* import resolves to the installed tarball's dist/.
      const dir = join(project, "workers");
      mkdirSync(dir, { recursive: true });
      cpSync(join(ROOT, "examples/workers/src/index.ts"), join(dir, "index.ts"));
      const bundle = join(dir, "index.mjs");
      const built = await esbuild({
        entryPoints: [join(dir, "index.ts")], outfile: bundle, absWorkingDir: project,
        bundle: true, format: "esm", platform: "neutral", conditions: ["workerd", "worker", "browser"], mainFields: ["module", "main"],
        external: ["node:*", "crypto"], minify: true, metafile: true, logLevel: "silent",
      });
      const imports = Object.values(built.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
      // What workerd's nodejs_compat provides; node:fs, node:http, node:net … would mean node-only code got in.
      expect([...new Set(imports)].filter((i) => !["crypto", "node:crypto", "node:buffer", "node:stream", "node:util", "node:events", "node:async_hooks", "node:zlib"].includes(i))).toEqual([]);
      expect(Object.keys(built.metafile.inputs).filter((i) => i.includes("node_modules/registry-kit/dist/")).length).toBeGreaterThan(0);
      const bytes = readFileSync(bundle);
      console.log(`[package-consumers] examples/workers from the tarball: ${(bytes.byteLength / 1024).toFixed(0)} KiB minified, ${(gzipSync(bytes).byteLength / 1024).toFixed(0)} KiB gzip`);

      const { privateKey } = await generateSigningKeyPem({ alg: "ES256" });
      const bindings = { SIGNING_KEY: privateKey, UPLOAD_SECRET: "0123456789abcdef0123456789abcdef", ADMIN_PASSWORD: admin.password };
      const server = startBackground(runtimes["node@24"]![0]!, [join(ROOT, "test/runtime/miniflare.mjs"), bundle, "--r2", "BUCKET", "--persist", join(dir, "r2")], {
        cwd: ROOT, env: { RK_BINDINGS: JSON.stringify(bindings) },
      });
      try {
        let url = "";
        await waitFor("workerd listening", async () => {
          if (server.exited()) throw new Error(`exited:\n${server.output()}`);
          url = /listening (http:\/\/127\.0\.0\.1:\d+)/.exec(server.output())?.[1] ?? "";
          return url !== "";
        }, 60_000, () => server.output());
        const challenge = await fetch(`${url}/v2/`);
        await challenge.arrayBuffer();
        expect(challenge.status, server.output()).toBe(401);
        await bobRoundTrip(url, dir, () => server.output());
      } finally {
        await server.stop();
      }
    });

    for (const [name, prepare] of examples) {
      it(`examples/${name}: a user made through /api/users pushes and pulls with skopeo; a push outside their namespace is refused; all of it survives a restart`, async () => {
        const dir = exampleCopy(name, join(work.path, "examples"), tarball);
        const command = await prepare(dir);
        const start = async (): Promise<{ server: Background; url: string }> => {
          // The runtime on PATH, as for a user who installed it (`bun run` starts the script's `bun`).
          const path = `${dirname(command[0]!)}${delimiter}${process.env.PATH ?? ""}`;
          const server = startBackground(command[0]!, command.slice(1), { cwd: dir, env: { PORT: "0", ADMIN_PASSWORD: admin.password, PATH: path } });
          let url = "";
          await waitFor(`examples/${name} listening`, async () => {
            if (server.exited()) throw new Error(`exited:\n${server.output()}`);
            url = /listening (http:\/\/127\.0\.0\.1:\d+)/.exec(server.output())?.[1] ?? "";
            return url !== "";
          }, 60_000, () => server.output());
          return { server, url };
        };

        let { server, url } = await start();
        try {
          const host = url.slice("http://".length);
          await bobRoundTrip(url, dir, () => server.output());
          const outside = await skopeo.copy(img.ref, `docker://${host}/admin/app:v1`, { destCreds: bob });
          expect(outside.code, describeRun(outside)).not.toBe(0);
          expect(outside.stderr).toMatch(/denied|unauthorized|insufficient/i);

          await server.stop();
          ({ server, url } = await start());
          expect(server.output(), "the administrator is not created twice").not.toContain("created the administrator");
          const again = await skopeo.inspectRaw(`docker://${url.slice("http://".length)}/bob/app:v1`, { creds: bob });
          expect(again.toString("utf8")).toBe(img.manifestBytes.toString("utf8"));
          expect(server.output()).not.toMatch(/FileHandle|DEP0|Error/);
        } finally {
          await server.stop();
        }
      });
    }
  });
});
