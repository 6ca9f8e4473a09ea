/**
 * `npm pack` in a fresh checkout, as a new user runs it (issue 41, item 14):
 * a copy of the repository's files without dist/ (node_modules linked, no
 * network), packed with its lifecycle scripts, so `prepack` must build. The
 * tarball must hold every file package.json's `exports` and `bin` name, and,
 * unpacked into a consumer's node_modules, every subpath must import (ESM),
 * require (CommonJS) and type-check (NodeNext, both module kinds) there.
 * examples/workers must bundle from it as wrangler does without a warning.
 * test/interop/package-consumers.test.ts runs the same tarball's code on
 * several runtimes; it builds its own dist/ and packs with --ignore-scripts.
 * In the system project: child processes (git, npm, tsc, node).
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { build as esbuild } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageJson, publicSubpaths, runtimeNames } from "./export-names.js";

const ROOT = resolve(import.meta.dirname, "../..");
const MODULES = realpathSync(join(ROOT, "node_modules"));

interface Manifest {
  name: string;
  version: string;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  exports: Record<string, string | Record<string, Record<string, string>>>;
}
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Manifest;

/** Every file path an `exports` entry names (conditions flattened). */
function exportTargets(): string[] {
  const targets: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === "string") targets.push(value.replace(/^\.\//, ""));
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(manifest.exports);
  return [...new Set(targets)].sort();
}

const specifier = (subpath: string): string => (subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`);
const requirable = (subpath: string): boolean => {
  const entry = packageJson().exports[subpath];
  return typeof entry === "object" && entry !== null && "require" in entry;
};

let work: string;
let tarball: string;
let listed: string[];
let consumer: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "rk-pack-"));
  // The files a clone has: tracked and new, not ignored (so no dist/, .tmp/ or data/).
  const checkout = join(work, "checkout");
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f !== "" && f !== "node_modules");
  for (const file of files) {
    mkdirSync(dirname(join(checkout, file)), { recursive: true });
    try {
      cpSync(join(ROOT, file), join(checkout, file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error; // deleted, not yet committed
    }
  }
  symlinkSync(MODULES, join(checkout, "node_modules"));
  expect(readdirSync(checkout)).not.toContain("dist");

  execFileSync("npm", ["pack", "--pack-destination", work, "--loglevel=error"], { cwd: checkout, stdio: "pipe", timeout: 300_000 });
  const [name] = readdirSync(work).filter((f) => f.endsWith(".tgz"));
  tarball = join(work, name!);
  listed = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ""));

  // A consumer's project: the tarball unpacked beside node_modules and linked in, as npm installs a
  // `file:` dependency (the examples' `"registry-kit": "file:../.."`), its dependencies linked.
  consumer = join(work, "consumer");
  const modules = join(consumer, "node_modules");
  mkdirSync(modules, { recursive: true });
  execFileSync("tar", ["-xzf", tarball, "-C", consumer]);
  renameSync(join(consumer, "package"), join(consumer, manifest.name));
  symlinkSync(join("..", manifest.name), join(modules, manifest.name));
  for (const dep of [...Object.keys(manifest.dependencies), "@types/node"]) {
    mkdirSync(dirname(join(modules, dep)), { recursive: true });
    symlinkSync(join(MODULES, dep), join(modules, dep));
  }
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ private: true, type: "module" }));
}, 360_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("npm pack in a fresh checkout", () => {
  it("builds on prepack: the tarball holds every file that exports and bin name, and the one-file CLI", () => {
    const missing = [...exportTargets(), ...Object.values(manifest.bin).map((f) => f.replace(/^\.\//, "")), "dist/cli/registry-kit.cjs", "dist/cli/code-cache.mjs"]
      .filter((f) => !listed.includes(f));
    expect(missing, `not in ${tarball}`).toEqual([]);
    expect(listed.filter((f) => f.startsWith("src/") || f.startsWith("test/") || f.startsWith(".tmp/"))).toEqual([]);
  });

  it("every subpath imports (ESM) and requires (CommonJS) from the unpacked tarball, with the names the sources export", async () => {
    const subpaths = publicSubpaths();
    const script = `
      import { createRequire } from "node:module";
      const require = createRequire(import.meta.url);
      const out = { esm: {}, cjs: {} };
      for (const [subpath, id, cjs] of ${JSON.stringify(subpaths.map((s) => [s, specifier(s), requirable(s)]))}) {
        // registry-kit/testing needs vitest, which this consumer does not have: resolving it is enough.
        if (subpath === "./testing") { out.esm[subpath] = import.meta.resolve(id); continue; }
        out.esm[subpath] = Object.keys(await import(id)).sort();
        if (cjs) out.cjs[subpath] = Object.keys(require(id)).sort();
      }
      console.log(JSON.stringify(out));`;
    writeFileSync(join(consumer, "load.mjs"), script);
    const out = JSON.parse(execFileSync(process.execPath, ["load.mjs"], { cwd: consumer, encoding: "utf8" })) as {
      esm: Record<string, string[] | string>;
      cjs: Record<string, string[]>;
    };
    for (const subpath of subpaths) {
      if (subpath === "./testing") {
        expect(out.esm[subpath]).toMatch(new RegExp(`/${manifest.name}/dist/testing/index\\.js$`));
        continue;
      }
      const names = await runtimeNames(subpath);
      expect(out.esm[subpath], `import ${specifier(subpath)}`).toEqual(names);
      if (requirable(subpath)) expect(out.cjs[subpath], `require ${specifier(subpath)}`).toEqual(names);
    }
  });

  it("every subpath type-checks from the unpacked tarball (NodeNext, from an ES module and from a CommonJS one)", () => {
    const subpaths = publicSubpaths().filter((s) => s !== "./testing"); // its declarations import vitest
    writeFileSync(join(consumer, "esm.ts"), subpaths.map((s, i) => `import * as m${i} from "${specifier(s)}";\nexport { m${i} };\n`).join(""));
    writeFileSync(
      join(consumer, "cjs.cts"),
      subpaths.filter(requirable).map((s, i) => `import m${i} = require("${specifier(s)}");\nexport { m${i} };\n`).join(""),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const args = [tsc, "--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--types", "node", "esm.ts", "cjs.cts"];
    try {
      execFileSync(process.execPath, args, { cwd: consumer, encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      expect.fail(`the packed declarations do not type-check:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
    }
  }, 120_000);

  it("examples/workers bundles from the packed package as wrangler does, without a warning", async () => {
    // wrangler's esbuild pass for a Worker (test/interop/runtimes-skopeo.test.ts has the same options), the
    // package linked as `file:` links it (esbuild is silent about code whose real path is in node_modules):
    // each bare `import "./chunk-….js"` of a "sideEffects": false package was one warning (34 of them).
    const built = await esbuild({
      entryPoints: [join(ROOT, "examples/workers/src/index.ts")],
      outfile: join(work, "worker.js"),
      bundle: true,
      format: "esm",
      platform: "neutral",
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["module", "main"],
      external: ["node:*", "crypto"],
      nodePaths: [join(consumer, "node_modules")],
      logLevel: "silent",
      metafile: true,
    });
    expect(Object.keys(built.metafile.inputs).filter((f) => f.includes(`consumer/${manifest.name}/dist/`)).length).toBeGreaterThan(0);
    expect(built.warnings.map((w) => `${w.location?.file ?? ""}: ${w.text}`)).toEqual([]);
  });

  it("the packed command runs: registry-kit --version", () => {
    const bin = join(consumer, "node_modules", manifest.name, manifest.bin["registry-kit"]!); // through the link, as npm's .bin does
    expect(execFileSync(process.execPath, [bin, "--version"], { cwd: consumer, encoding: "utf8" }).trim()).toBe(manifest.version);
  });
});
