/**
 * The CLI bundle's V8 code cache (src/cli/code-cache.ts): where it lives, that
 * it is written private and used again, and that a cache that is not the
 * user's own, damaged, or made for another bundle is never handed to V8 — the
 * bundle then runs as if there were none. Small CommonJS files stand in for
 * the bundle.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_BUNDLE_PARAMETERS, codeCacheDir, runCached } from "../../src/cli/code-cache.js";

let work: string;
let cacheDir: string;
let counter = 0;

/** A "bundle" as scripts/cli-bundle.ts writes one (a function expression around CommonJS code), with enough functions for V8 to cache; each call gets a unique source so V8's in-memory cache cannot stand in for ours. */
function bundle(name = "registry-kit.cjs", text = "ascii"): string {
  const file = path.join(work, "dist", name);
  mkdirSync(path.dirname(file), { recursive: true });
  counter++;
  const fns = Array.from({ length: 50 }, (_, i) => `function f${i}(x) { return x * ${i} + ${counter}; }`).join("\n");
  const body = `"use strict";\n${fns}\nexports.sum = (x) => ${Array.from({ length: 50 }, (_, i) => `f${i}(x)`).join(" + ")};\nexports.url = __rkImportMetaUrl;\nexports.sep = require("node:path").sep;\nexports.dir = __dirname;\nexports.text = "${text}";\n`;
  writeFileSync(file, `(function (${CLI_BUNDLE_PARAMETERS.join(", ")}) {\n${body}})\n`);
  return file;
}

const cacheFiles = (): string[] => (existsSync(cacheDir) ? readdirSync(cacheDir).filter((f) => f.endsWith(".v8")) : []);

beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), "rk-code-cache-"));
  cacheDir = path.join(work, "cache", "registry-kit");
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

describe("codeCacheDir", () => {
  it("is registry-kit under the user's cache directory, never a shared temp directory; NODE_DISABLE_COMPILE_CACHE turns it off", () => {
    expect(codeCacheDir({ XDG_CACHE_HOME: "/home/u/.xdg" }, "linux")).toBe("/home/u/.xdg/registry-kit");
    expect(codeCacheDir({ XDG_CACHE_HOME: "relative/dir", HOME: "/home/u" }, "linux")).toMatch(/\/\.cache\/registry-kit$/); // a relative XDG_CACHE_HOME is ignored
    expect(codeCacheDir({}, "darwin")).toMatch(/\/Library\/Caches\/registry-kit$/);
    expect(codeCacheDir({ LOCALAPPDATA: "/c/Users/u/AppData/Local", XDG_CACHE_HOME: "/x" }, "win32")).toBe("/c/Users/u/AppData/Local/registry-kit");
    expect(codeCacheDir({ XDG_CACHE_HOME: "/home/u/.xdg", NODE_DISABLE_COMPILE_CACHE: "1" }, "linux")).toBeUndefined();
    expect(codeCacheDir({ XDG_CACHE_HOME: "/home/u/.xdg" }, "linux")).not.toMatch(/^\/tmp\b/);
  });
});

describe("runCached", () => {
  it("runs the file as CommonJS with its own URL, writes a private cache once, and hands it to V8 on the next run", () => {
    const file = bundle();
    const first = runCached(file, cacheDir);
    expect(first.state).toBe("absent");
    expect((first.exports.sum as (x: number) => number)(2)).toBe(2 * 1225 + 50 * counter);
    expect(first.exports.url).toBe(pathToFileURL(file).href);
    expect(first.exports.dir).toBe(path.dirname(file));
    expect(first.exports.sep).toBe(path.sep);
    expect(first.save()).toBe(true);
    expect(first.save()).toBe(false); // once per run
    expect(cacheFiles()).toHaveLength(1);
    if (process.platform !== "win32") {
      expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
      expect(statSync(path.join(cacheDir, cacheFiles()[0]!)).mode & 0o777).toBe(0o600);
    }
    const second = runCached(file, cacheDir);
    expect(second.state).toBe("accepted"); // read, checked and given to V8 (which, in this process, has the script in memory anyway)
    expect((second.exports.sum as (x: number) => number)(2)).toBe(2 * 1225 + 50 * counter);
    expect(second.save()).toBe(false); // nothing to refresh
    expect(cacheFiles()).toHaveLength(1);
  });

  it("reads a bundle with characters beyond ASCII as UTF-8", () => {
    const file = bundle("registry-kit.cjs", "\u00b5s \u00b7 \u{1f600}");
    expect(runCached(file, cacheDir).exports.text).toBe("\u00b5s \u00b7 \u{1f600}");
  });

  it("a changed bundle does not use the old cache", () => {
    const file = bundle();
    runCached(file, cacheDir).save();
    bundle(); // same path, new contents (V8 itself compares only the length)
    expect(runCached(file, cacheDir).state).toBe("absent");
  });

  it("a damaged cache file is not given to V8: the run goes on without it and the next save replaces it", () => {
    const file = bundle();
    runCached(file, cacheDir).save();
    const cache = path.join(cacheDir, cacheFiles()[0]!);
    const bytes = readFileSync(cache);
    bytes[bytes.length - 10]! ^= 0xff;
    writeFileSync(cache, bytes, { mode: 0o600 });
    const run = runCached(file, cacheDir);
    expect(run.state).toBe("damaged");
    expect((run.exports.sum as (x: number) => number)(1)).toBe(1225 + 50 * counter);
    writeFileSync(cache, bytes.subarray(0, 20), { mode: 0o600 }); // truncated
    const again = runCached(file, cacheDir);
    expect(again.state).toBe("damaged");
    expect(again.save()).toBe(true);
    expect(runCached(file, cacheDir).state).toBe("accepted"); // the new file passes the magic and checksum checks
  });

  it.runIf(typeof process.getuid === "function")("a cache in a folder others may write, a cache file others may write, or a symbolic link is not used", () => {
    const file = bundle();
    runCached(file, cacheDir).save();
    const cache = path.join(cacheDir, cacheFiles()[0]!);
    chmodSync(cacheDir, 0o777);
    expect(runCached(file, cacheDir).state).toBe("untrusted");
    expect(runCached(file, cacheDir).save()).toBe(false); // nor written there
    chmodSync(cacheDir, 0o700);
    chmodSync(cache, 0o666);
    expect(runCached(file, cacheDir).state).toBe("untrusted");
    chmodSync(cache, 0o600);
    expect(runCached(file, cacheDir).state).toBe("accepted");

    const elsewhere = path.join(work, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    const linked = path.join(work, "linked");
    symlinkSync(cacheDir, linked);
    expect(runCached(file, linked).state).toBe("untrusted"); // the folder is a link
    const target = path.join(elsewhere, "target.v8");
    writeFileSync(target, readFileSync(cache), { mode: 0o600 });
    rmSync(cache);
    symlinkSync(target, cache);
    expect(runCached(file, cacheDir).state).toBe("untrusted"); // the file is a link
  });

  it("without a usable cache directory it runs all the same and saving is a no-op", () => {
    const file = bundle();
    const off = runCached(file, undefined);
    expect(off.state).toBe("off");
    expect(off.save()).toBe(false);
    const blocker = path.join(work, "not-a-dir");
    writeFileSync(blocker, "");
    const blocked = runCached(file, path.join(blocker, "registry-kit"));
    expect(blocked.state).toBe("absent");
    expect((blocked.exports.sum as (x: number) => number)(0)).toBe(50 * counter);
    expect(blocked.save()).toBe(false);
  });

  it("keeps the eight newest cache files", () => {
    for (let i = 0; i < 10; i++) runCached(bundle(`b${i}.cjs`), cacheDir).save();
    expect(cacheFiles()).toHaveLength(8);
  });
});
