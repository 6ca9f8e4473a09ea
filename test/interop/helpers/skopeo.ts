/**
 * skopeo, isolated per test.
 *
 * Each sandbox gets its own HOME, XDG_* directories, auth file
 * (`--authfile` and `REGISTRY_AUTH_FILE`), trust policy (`--policy`,
 * accept anything), registries.conf (`CONTAINERS_REGISTRIES_CONF`),
 * registries.d and temp dir, so nothing a test does reaches another test
 * through skopeo's configuration or stored logins.
 *
 * The blob-info cache cannot be isolated this way when skopeo runs as root
 * (as in CI): containers/image then always uses
 * /var/lib/containers/cache/blob-info-cache-v1.boltdb; only a non-root user
 * gets $XDG_DATA_HOME/containers/cache, and skopeo 1.9.3 has no flag or
 * environment variable for the location (SystemContext.BlobInfoCacheDir is
 * never set by the CLI). skopeo uses the cache to skip blobs it believes a
 * registry already has and to choose cross-repository mount sources. The
 * tests are therefore isolated by content instead: every image built by
 * buildTestImage() carries a random nonce, so its digests are new to the
 * cache, and repository names are unique per run. Within one test the cache
 * does what it does for users (e.g. it makes the A → B copy use a mount).
 */
import { isolatedToolConfig } from "./tool-config.js";
import { requireTool, run, runOk, tempDir, type RunResult } from "./process.js";

export interface Creds {
  username: string;
  password: string;
}

export interface CopyOptions {
  srcCreds?: Creds;
  destCreds?: Creds;
  /** `--src-no-creds`: anonymous pull even if the auth file has a login. */
  srcNoCreds?: boolean;
  destNoCreds?: boolean;
  /** `--format`: oci, v2s1 or v2s2. */
  format?: "oci" | "v2s1" | "v2s2";
  extraArgs?: string[];
  timeoutMs?: number;
}

const creds = (c: Creds) => `${c.username}:${c.password}`;
const isDocker = (ref: string) => ref.startsWith("docker://");

export interface SkopeoSandbox {
  bin: string;
  dir: string;
  env: NodeJS.ProcessEnv;
  /** Arguments placed before the subcommand (`--policy`, `--registries.d`, `--tmpdir`). */
  globalArgs: string[];
  authfile: string;
  /** Run `skopeo <globalArgs> <args>`; never throws on a non-zero exit. */
  raw(args: string[], timeoutMs?: number): Promise<RunResult>;
  copy(src: string, dest: string, opts?: CopyOptions): Promise<RunResult>;
  /** `skopeo inspect --raw`: the manifest bytes as served. Throws on failure. */
  inspectRaw(ref: string, opts?: { creds?: Creds; noCreds?: boolean }): Promise<Buffer>;
  inspect(ref: string, opts?: { creds?: Creds; noCreds?: boolean }): Promise<RunResult>;
  remove(): void;
}

export function skopeoSandbox(): SkopeoSandbox {
  const bin = requireTool("skopeo");
  const tmp = tempDir("skopeo");
  const { sub: d, authfile, policy, registriesConf } = isolatedToolConfig(tmp.path);
  const home = d("home");
  const runtime = d("run");
  const config = d("config");
  const data = d("data");
  const cache = d("cache");
  const registriesD = d("registries.d");
  const bigTmp = d("tmp");

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: home,
    XDG_RUNTIME_DIR: runtime,
    XDG_CONFIG_HOME: config,
    XDG_DATA_HOME: data,
    XDG_CACHE_HOME: cache,
    TMPDIR: bigTmp,
    REGISTRY_AUTH_FILE: authfile,
    CONTAINERS_REGISTRIES_CONF: registriesConf,
    LANG: "C.UTF-8",
    // never use a proxy for loopback traffic
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  };
  const globalArgs = ["--policy", policy, "--registries.d", registriesD, "--tmpdir", bigTmp];

  const raw = (args: string[], timeoutMs = 180_000) =>
    run(bin, [...globalArgs, ...args], { env, replaceEnv: true, timeoutMs });

  const authArgs = (ref: string, c: Creds | undefined, noCreds: boolean | undefined): string[] => {
    if (!isDocker(ref)) return [];
    const a = ["--tls-verify=false", "--authfile", authfile];
    if (c) a.push("--creds", creds(c));
    if (noCreds) a.push("--no-creds");
    return a;
  };

  return {
    bin,
    dir: tmp.path,
    env,
    globalArgs,
    authfile,
    raw,
    copy(src, dest, o = {}) {
      const args = ["copy", "--retry-times", "0"];
      if (isDocker(src)) args.push("--src-tls-verify=false", "--src-authfile", authfile);
      if (isDocker(dest)) args.push("--dest-tls-verify=false", "--dest-authfile", authfile);
      if (o.srcCreds) args.push("--src-creds", creds(o.srcCreds));
      if (o.destCreds) args.push("--dest-creds", creds(o.destCreds));
      if (o.srcNoCreds) args.push("--src-no-creds");
      if (o.destNoCreds) args.push("--dest-no-creds");
      if (o.format) args.push("--format", o.format);
      args.push(...(o.extraArgs ?? []), src, dest);
      return raw(args, o.timeoutMs);
    },
    async inspectRaw(ref, o = {}) {
      const r = await runOk(bin, [...globalArgs, "inspect", "--raw", "--retry-times", "0", ...authArgs(ref, o.creds, o.noCreds), ref], {
        env,
        replaceEnv: true,
        timeoutMs: 120_000,
      });
      // stdout is the manifest exactly as served (skopeo writes the raw bytes
      // and adds nothing when they end in a newline); return bytes as given.
      return Buffer.from(r.stdout, "utf8");
    },
    inspect(ref, o = {}) {
      return raw(["inspect", "--retry-times", "0", ...authArgs(ref, o.creds, o.noCreds), ref], 120_000);
    },
    remove: () => tmp.remove(),
  };
}
