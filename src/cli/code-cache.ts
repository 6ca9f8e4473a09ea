/**
 * Runs the one-file CLI bundle (`dist/cli/registry-kit.cjs`) with a V8 code
 * cache of its own, so that a start after the first one skips compiling it
 * and the functions the start ran (docs/performance.md, "Start-up"). Node 20
 * has no compile cache for user code (22.1+ has `module.enableCompileCache`),
 * and `vm.Script`'s `cachedData` works on every version.
 *
 * The cache lives in the user's own cache directory (`$XDG_CACHE_HOME` or
 * `~/.cache`, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows), in a
 * `registry-kit` folder created with mode 0700; never in a shared temp
 * directory. A cache file is used only when its folder and the file are owned
 * by the user and writable by no one else, and when the SHA-256 it carries
 * matches its contents; V8 then checks the Node version, its flags and the
 * source. Anything wrong, or the directory unusable: the bundle is compiled
 * without a cache, silently (a damaged file is then replaced; one that is
 * not private is left alone). `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 *
 * Built as `dist/cli/code-cache.mjs` (scripts/cli-bundle.ts) and imported by
 * bin/registry-kit.mjs before the bundle; not part of the bundle itself.
 *
 * @module
 */
import { isAscii } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";
import vm from "node:vm";

/** What happened to the cache on this start. */
export type CodeCacheState = "accepted" | "rejected" | "absent" | "damaged" | "untrusted" | "off";

/** A bundle evaluated by {@link runCached}. */
export interface CachedRun {
  /** The bundle's `module.exports`. */
  exports: Record<string, unknown>;
  /** `accepted`: V8 used the cache; `rejected`: V8 refused it (another Node or flags); `absent`; `damaged`: truncated or its checksum wrong (rewritten); `untrusted`: the folder or file is not the user's own and private (left alone); `off`: no cache directory. */
  state: CodeCacheState;
  /** Write the cache (when it was not accepted) with the functions compiled so far; never throws. Returns whether a file was written. */
  save(): boolean;
}

/** The parameters of the function expression that is the bundle's whole text (scripts/cli-bundle.ts writes it so). */
export const CLI_BUNDLE_PARAMETERS = ["exports", "require", "module", "__filename", "__dirname", "__rkImportMetaUrl"] as const;

const MAGIC = Buffer.from("rk-v8cache-1\n");
const DIGEST = 32;
/** Bigger than any cache this bundle makes (~0.6 MiB); a larger file is not read. */
const MAX_BYTES = 64 << 20;
/** Cache files kept per directory (one per bundle, Node version and flags); the oldest beyond go when a new one is written. */
const KEEP = 8;

/** The directory the cache lives in for this user, or undefined when there is none (or `NODE_DISABLE_COMPILE_CACHE` is set). */
export function codeCacheDir(env: Record<string, string | undefined> = process.env, platform: NodeJS.Platform = process.platform): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  let base: string | undefined;
  if (platform === "win32") base = env.LOCALAPPDATA;
  else if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) base = env.XDG_CACHE_HOME;
  else {
    let home: string;
    try {
      home = homedir();
    } catch {
      return undefined;
    }
    if (!home || !isAbsolute(home)) return undefined;
    base = platform === "darwin" ? join(home, "Library", "Caches") : join(home, ".cache");
  }
  return base && isAbsolute(base) ? join(base, "registry-kit") : undefined;
}

/**
 * Run `file`, whose text is one function expression
 * `(function (exports, require, module, __filename, __dirname, __rkImportMetaUrl) {…})`
 * (scripts/cli-bundle.ts writes the bundle so), called the way `require()`
 * calls a CommonJS module, with the file's URL for the bundle's
 * `import.meta.url`; using and later writing a code cache in `cacheDir` when
 * given.
 */
export function runCached(file: string, cacheDir: string | undefined): CachedRun {
  const bytes = readFileSync(file);
  // ASCII (the bundle is; bundle.test.ts checks it) becomes a one-byte string without UTF-8 decoding; V8 keeps
  // the text for as long as the process runs, so half the memory of the two-byte string any other character makes.
  const source = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
  // The name binds the cache to this exact bundle, Node and its flags (V8 itself checks only the source's length).
  const key = createHash("sha256").update(`${process.version}\0${process.arch}\0${process.execArgv.join(" ")}\0${process.env.NODE_OPTIONS ?? ""}\0`).update(bytes).digest("hex").slice(0, 32);
  const cacheFile = cacheDir === undefined ? undefined : join(cacheDir, `${basename(file)}-${key}.v8`);
  let state: CodeCacheState = cacheFile === undefined ? "off" : "absent";
  let cachedData: Buffer | undefined;
  if (cacheFile !== undefined) {
    const read = readCache(cacheFile);
    if (read === "untrusted" || read === "damaged") state = read;
    else cachedData = read;
  }
  const script = new vm.Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) });
  if (cachedData) state = script.cachedDataRejected ? "rejected" : "accepted";
  const module = { exports: {} as Record<string, unknown> };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dirname(file), pathToFileURL(file).href);
  let saved = false;
  return {
    exports: module.exports,
    state,
    save: () => {
      if (saved || cacheFile === undefined || state === "accepted" || state === "untrusted") return false;
      saved = true;
      try {
        return writeCache(cacheFile, script.createCachedData());
      } catch {
        return false;
      }
    },
  };
}

/** Whether `path` is what only this user may write: owned by them, no group or other write bit (where Node reports owners). */
function ownedAndPrivate(stat: { uid: number; mode: number }): boolean {
  if (typeof process.getuid !== "function") return true; // Windows: %LOCALAPPDATA% is the user's own
  return stat.uid === process.getuid() && (stat.mode & 0o022) === 0;
}

/** The V8 data of a trusted, intact cache file; undefined when there is none; "untrusted" when the folder or file is not private to the user; "damaged" when its contents fail the check. */
function readCache(file: string): Buffer | undefined | "untrusted" | "damaged" {
  let dir;
  try {
    dir = lstatSync(dirname(file));
  } catch {
    return undefined;
  }
  if (!dir.isDirectory() || !ownedAndPrivate(dir)) return "untrusted";
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? undefined : "untrusted";
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || !ownedAndPrivate(stat)) return "untrusted";
    if (stat.size > MAX_BYTES || stat.size < MAGIC.length + DIGEST) return "damaged";
    const bytes = readFileSync(fd);
    if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) return "damaged";
    const digest = bytes.subarray(MAGIC.length, MAGIC.length + DIGEST);
    const data = bytes.subarray(MAGIC.length + DIGEST);
    // V8 release builds do not checksum code caches: a truncated or damaged file must never reach it.
    return createHash("sha256").update(data).digest().equals(digest) ? data : "damaged";
  } catch {
    return "damaged";
  } finally {
    closeSync(fd);
  }
}

/** Write `data` to `file` atomically (a private temp file renamed over it), in a folder only this user may write. */
function writeCache(file: string, data: Buffer): boolean {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || !ownedAndPrivate(stat)) return false;
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const digest = createHash("sha256").update(data).digest();
  try {
    writeFileSync(temp, Buffer.concat([MAGIC, digest, data]), { flag: "wx", mode: 0o600 });
    renameSync(temp, file);
  } catch {
    rmSync(temp, { force: true });
    return false;
  }
  prune(dir);
  return true;
}

/** Keep the {@link KEEP} newest cache files (older bundles and Node versions leave theirs behind). */
function prune(dir: string): void {
  try {
    const files = readdirSync(dir)
      .filter((name) => name.endsWith(".v8"))
      .map((name) => ({ path: join(dir, name), mtime: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    for (const old of files.slice(KEEP)) rmSync(old.path, { force: true });
  } catch {
    // a concurrent start pruned first
  }
}
