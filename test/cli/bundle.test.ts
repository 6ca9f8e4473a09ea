/**
 * The command line as the package ships it: scripts/cli-bundle.ts's one file
 * (dist/cli/registry-kit.cjs, dependencies inlined) run by
 * bin/registry-kit.mjs from a package layout (bin/, dist/, package.json,
 * node_modules/), without src/ beside it: what `npx registry-kit` starts once
 * the package is built; and the bundle's V8 code cache (src/cli/code-cache.ts)
 * across processes.
 */
import { isAscii } from "node:buffer";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleCli, CLI_BUNDLE_EXTERNAL } from "../../scripts/cli-bundle.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PASSWORD = "Adm1nPassword";
const VERSION = "0.0.0-bundle-test";
let work: string;
let bin: string;
let bundle: string;
let built: Awaited<ReturnType<typeof bundleCli>>;
/** XDG_CACHE_HOME of every child: the code cache lands in <cacheHome>/registry-kit. */
let cacheHome: string;
const childEnv = (): NodeJS.ProcessEnv => {
  const { NODE_DISABLE_COMPILE_CACHE: _off, ...env } = process.env;
  return { ...env, XDG_CACHE_HOME: cacheHome };
};

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function runBin(args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [bin, ...args], { cwd: work, env: childEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, out, err })));
}

/** `serve config.yml` until its banner's last line; `stop()` sends SIGTERM and resolves to the exit code. */
function serve(config: string): Promise<{ url: string; out: () => string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [bin, "serve", config], {
    cwd: work,
    env: { ...childEnv(), REGISTRY_KIT_ADMIN_PASSWORD: PASSWORD },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const stop = (): Promise<number | null> => {
    child.kill("SIGTERM");
    return exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no banner after 30 s\nstdout: ${out}\nstderr: ${err}`));
    }, 30_000);
    child.stdout.on("data", () => {
      const url = /registry-kit listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url && out.includes("SIGTERM stops the server")) {
        clearTimeout(timer);
        resolve({ url, out: () => out, stop });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before the banner\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

const kidOf = (token: string): string => (JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()) as { kid: string }).kid;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "rk-bundle-"));
  const pkg = path.join(work, "package");
  mkdirSync(path.join(pkg, "bin"), { recursive: true });
  cpSync(path.join(ROOT, "bin", "registry-kit.mjs"), path.join(pkg, "bin", "registry-kit.mjs"));
  const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ ...manifest, version: VERSION }));
  symlinkSync(path.join(ROOT, "node_modules"), path.join(pkg, "node_modules"));
  built = await bundleCli(path.join(pkg, "dist"));
  bin = path.join(pkg, "bin", "registry-kit.mjs");
  bundle = path.join(pkg, "dist", "cli", "registry-kit.cjs");
  cacheHome = path.join(work, "xdg-cache");
}, 60_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the one-file CLI bundle", () => {
  it("imports nothing but node: builtins and the dependencies it leaves lazy; the inlined packages' licenses ship beside it", () => {
    expect(existsSync(path.join(path.dirname(bundle), "..", "cli", "main.js"))).toBe(false); // only the bundle: bin/ cannot fall back
    expect(built.imports.filter((s) => !isBuiltin(s) && !CLI_BUNDLE_EXTERNAL.includes(s))).toEqual([]);
    expect(built.imports).toContain("@peculiar/x509");
    expect(built.imports).toContain("node:http");

    const yaml = (JSON.parse(readFileSync(path.join(ROOT, "node_modules", "yaml", "package.json"), "utf8")) as { version: string }).version;
    expect(built.inlined).toContain(`yaml@${yaml}`);
    const licenses = readFileSync(path.join(path.dirname(bundle), "THIRD-PARTY-LICENSES.txt"), "utf8");
    for (const name of built.inlined) expect(licenses).toContain(`${name} (`);
    expect(licenses).toContain("Permission to use, copy, modify, and/or distribute this software"); // yaml's ISC text
    // ASCII, so V8 holds the text (for the life of the process) as one-byte characters: half the memory.
    expect(isAscii(readFileSync(bundle))).toBe(true);
  });

  it("runs from bin/registry-kit.mjs: --version reads the package's own package.json", async () => {
    const r = await runBin(["--version"]);
    expect(r).toEqual({ code: 0, out: `${VERSION}\n`, err: "" });
  });

  it("serves a YAML config: keys made on the first start (X.509 loaded lazily), 401 challenge, tokens, the web page; the same kid after a restart", async () => {
    const config = path.join(work, "config.yml");
    writeFileSync(config, [
      "version: 0.1",
      "log:",
      "  level: error",
      "http:",
      "  addr: 127.0.0.1:0",
      "storage:",
      "  filesystem:",
      `    rootdirectory: ${path.join(work, "data")}`,
      "registrykit:",
      `  keydirectory: ${path.join(work, "keys")}`,
      "  tokenservice: {}",
      "  users: {}",
      "",
    ].join("\n"));
    let kid: string;
    const first = await serve(config);
    try {
      expect(first.out()).toMatch(/signing key {5}\S+token-signing-key\.pem \(generated now\)/);
      expect(first.out()).toContain(`(registry-kit ${VERSION})`);
      const challenge = await fetch(`${first.url}/v2/`);
      expect(challenge.status).toBe(401);
      expect(challenge.headers.get("www-authenticate")).toBe(`Bearer realm="${first.url}/service/token",service="registry-kit"`);
      const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString("base64")}`;
      const res = await fetch(`${first.url}/service/token?service=registry-kit&scope=repository:team/app:pull`, { headers: { authorization: basic } });
      expect(res.status).toBe(200);
      const { token } = (await res.json()) as { token: string };
      kid = kidOf(token);
      expect(first.out()).toContain(`key id (kid)    ${kid}`);
      expect((await fetch(`${first.url}/v2/`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      const page = await fetch(`${first.url}/ui/`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await serve(config);
    try {
      expect(second.out()).not.toContain("generated now");
      expect(second.out()).toContain(`key id (kid)    ${kid}`);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });

  it("keeps a private V8 code cache of the bundle that the next process takes; one V8 refuses is reported and replaced", async () => {
    const cacheDir = path.join(cacheHome, "registry-kit");
    const config = path.join(work, "cache-config.yml");
    writeFileSync(config, `version: 0.1\nlog:\n  level: error\nhttp:\n  addr: 127.0.0.1:0\nstorage:\n  filesystem:\n    rootdirectory: ${path.join(work, "cache-data")}\n`);
    rmSync(cacheDir, { recursive: true, force: true });
    const server = await serve(config);
    expect((await fetch(`${server.url}/v2/`)).status).toBe(200);
    expect(await server.stop()).toBe(0); // written by then (after 1 s, or at exit)
    const files = readdirSync(cacheDir).filter((f) => f.endsWith(".v8"));
    expect(files).toHaveLength(1);
    if (process.platform !== "win32") {
      expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
      expect(statSync(path.join(cacheDir, files[0]!)).mode & 0o777).toBe(0o600);
    }
    // What bin/ does, in a fresh process each time (V8 only consults a cache for code it has not compiled yet).
    const runner = path.join(work, "runner.mjs");
    writeFileSync(runner, [
      `import { codeCacheDir, runCached } from ${JSON.stringify(pathToFileURL(path.join(path.dirname(bundle), "code-cache.mjs")).href)};`,
      `const run = runCached(${JSON.stringify(bundle)}, codeCacheDir());`,
      `process.stdout.write(\`\${run.state} \${typeof run.exports.main}\${process.argv[2] === "save" ? \` saved=\${run.save()}\` : ""}\`);`,
    ].join("\n"));
    const state = async (...args: string[]): Promise<string> => {
      const child = spawn(process.execPath, [runner, ...args], { cwd: work, env: childEnv(), stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      await new Promise((resolve) => child.on("exit", resolve));
      return out;
    };
    expect(await state()).toBe("accepted function");
    // Data with a valid checksum that V8 refuses (as after a Node upgrade): compiled without it, then rewritten.
    const cache = path.join(cacheDir, files[0]!);
    const header = readFileSync(cache).subarray(0, "rk-v8cache-1\n".length);
    const junk = Buffer.alloc(4096, 7);
    writeFileSync(cache, Buffer.concat([header, createHash("sha256").update(junk).digest(), junk]), { mode: 0o600 });
    expect(await state("save")).toBe("rejected function saved=true");
    expect(await state()).toBe("accepted function");
  }, 60_000);
});
