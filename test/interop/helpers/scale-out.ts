/**
 * Scale-out rig: one radosgw, N real `registry-kit serve` processes on one
 * bucket (same `http.secret`, same token signing key files), and nginx
 * round-robin in front. Used by test/interop/scale-out.test.ts and by
 * bench/scale-out.ts, so it imports nothing from vitest: every start function
 * throws (never skips) when a program is missing or does not come up, and
 * every started process is stopped by `stop()` and, failing that, dies with
 * this process (process.ts's watchdog and exit hook).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { AwsV4Signer } from "aws4fetch";
import { stringify } from "yaml";
import { generateSigningKeyPem } from "../../../src/auth/index.js";
import { memoryImageStore, type LocalImageStore } from "../../../src/client/index.js";
import { OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST, sha256, tar } from "./image.js";
import { freePort, requireTool, run, startBackground, tempDir, waitFor, type Background } from "./process.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const BIN = join(ROOT, "bin/registry-kit.mjs");
const RGW_SCRIPTS = join(ROOT, "scripts/s3-server");
const RGW_HINT =
  "radosgw is needed: DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd curl procps";

// ---------------------------------------------------------------------------
// radosgw

export interface RgwServer {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** RGW_DIR (logs under `log/`). */
  dir: string;
  /** PIDs and names of ceph-mon, ceph-osd and radosgw. */
  daemons(): Array<{ pid: number; name: string }>;
  /** A SigV4-signed request straight to the server. */
  request(method: string, path: string): Promise<Response>;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Start a throw-away Ceph + radosgw on loopback (scripts/s3-server/start-rgw.sh). */
export async function startRadosgw(options: { osdBytes?: number } = {}): Promise<RgwServer> {
  for (const bin of ["radosgw", "ceph-mon", "ceph-osd", "radosgw-admin", "curl", "python3"]) {
    try {
      requireTool(bin);
    } catch {
      throw new Error(`missing ${bin}. ${RGW_HINT}`);
    }
  }
  const parent = tempDir("scale-rgw");
  const dir = join(parent.path, "rgw");
  const env: NodeJS.ProcessEnv = { RGW_DIR: dir, ...(options.osdBytes ? { RGW_OSD_BYTES: String(options.osdBytes) } : {}) };
  const started = await run("bash", [join(RGW_SCRIPTS, "start-rgw.sh")], { env, timeoutMs: 120_000 });
  if (started.code !== 0) {
    await run("bash", [join(RGW_SCRIPTS, "stop-rgw.sh")], { env, timeoutMs: 60_000 }).catch(() => undefined);
    parent.remove();
    throw new Error(`start-rgw.sh failed (exit ${started.code}${started.timedOut ? ", timed out" : ""}): ${started.stderr.slice(-3000)}`);
  }
  const rgw = attachRadosgw(dir);
  let stopped = false;
  rgw.stop = async () => {
    if (stopped) return;
    stopped = true;
    await run("bash", [join(RGW_SCRIPTS, "stop-rgw.sh")], { env, timeoutMs: 60_000 }).catch(() => undefined);
    parent.remove();
  };
  return rgw;
}

/**
 * Use a radosgw already started by start-rgw.sh in `dir` (its `env` and `pids`
 * files), e.g. one shared by several benchmark runs. `stop()` leaves it running.
 * An existing bucket is fine for `createBucket`.
 */
export function attachRadosgw(dir: string): RgwServer {
  const vars = Object.fromEntries(
    readFileSync(join(dir, "env"), "utf8").split("\n").filter((l) => l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  ) as Record<string, string>;
  const rgw: RgwServer = {
    endpoint: vars.S3_ENDPOINT!,
    accessKeyId: vars.AWS_ACCESS_KEY_ID!,
    secretAccessKey: vars.AWS_SECRET_ACCESS_KEY!,
    region: vars.AWS_DEFAULT_REGION ?? "us-east-1",
    dir,
    daemons: () => (!existsSync(join(dir, "pids")) ? [] : readFileSync(join(dir, "pids"), "utf8").trim().split("\n").filter(Boolean).map((l) => {
      const [pid, name] = l.split(" ");
      return { pid: Number(pid), name: name ?? "?" };
    })),
    async request(method, path) {
      const signed = await new AwsV4Signer({
        method, url: rgw.endpoint + path, accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey, service: "s3", region: rgw.region,
      }).sign();
      return fetch(signed.url, { method, headers: signed.headers });
    },
    async createBucket(name) {
      const res = await rgw.request("PUT", `/${name}`);
      const text = await res.text();
      if (!res.ok && !text.includes("BucketAlreadyOwnedByYou")) throw new Error(`creating bucket ${name}: ${res.status} ${text}`);
    },
    stop: async () => undefined,
  };
  return rgw;
}

// ---------------------------------------------------------------------------
// Key material shared by every process

export interface SharedKeys {
  /** PEM private key of the token service (mode 0600). */
  keyFile: string;
  /** Its self-signed certificate: also the registry's rootcertbundle. */
  certFile: string;
  /** The `http.secret` every process gets. */
  secret: string;
}

/** Generate the signing key pair once (`generateSigningKeyPem`) and an upload secret. */
export async function writeSharedKeys(dir: string): Promise<SharedKeys> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pem = await generateSigningKeyPem();
  const keyFile = join(dir, "token-signing-key.pem");
  const certFile = join(dir, "token-signing-cert.pem");
  writeFileSync(keyFile, pem.privateKey, { mode: 0o600 });
  writeFileSync(certFile, pem.certificate, { mode: 0o644 });
  return { keyFile, certFile, secret: randomBytes(32).toString("hex") };
}

// ---------------------------------------------------------------------------
// registry-kit processes

export interface AccessLine {
  method: string;
  target: string;
  status: number;
  user: string;
}

export interface Backend {
  index: number;
  port: number;
  url: string;
  configPath: string;
  proc: Background;
  /** The Common Log Format lines this process wrote so far, parsed. */
  accessLog(): AccessLine[];
  /** PIDs of the node process(es) (the watchdog's descendants). */
  pids(): number[];
}

export interface BackendOptions {
  /** Working directory for config files. */
  work: string;
  rgw: RgwServer;
  bucket: string;
  /** `storage.s3.rootdirectory`. */
  rootDirectory?: string;
  keys: SharedKeys;
  /** The load balancer's URL: `http.host`, so the realm points at it. */
  publicUrl: string;
  adminPassword: string;
  /** `storage.s3.chunksize`. */
  chunkSize?: number;
  /** Default "warn". */
  logLevel?: string;
  /** Repositories anyone may pull. */
  publicRepositories?: string[];
}

const CLF = /^\S+ - (\S+) \[[^\]]+\] "(\S+) (\S+) HTTP\/[\d.]+" (\d{3}|-) (?:\d+|-)$/;

/** The config.yml of backend `index`: Distribution keys plus the registrykit section. */
export function backendConfig(index: number, port: number, o: BackendOptions): Record<string, unknown> {
  return {
    version: 0.1,
    log: { level: o.logLevel ?? "warn" },
    http: { addr: `127.0.0.1:${port}`, host: o.publicUrl, secret: o.keys.secret, draintimeout: "2s" },
    storage: {
      s3: {
        bucket: o.bucket,
        region: o.rgw.region,
        regionendpoint: o.rgw.endpoint,
        forcepathstyle: true,
        accesskey: o.rgw.accessKeyId,
        // secretkey comes from REGISTRY_STORAGE_S3_SECRETKEY (see startBackend)
        ...(o.rootDirectory ? { rootdirectory: o.rootDirectory } : {}),
        ...(o.chunkSize ? { chunksize: o.chunkSize } : {}),
      },
      delete: { enabled: true },
    },
    registrykit: {
      // unused (key, certificate and secret are all given) but kept per process
      keydirectory: join(o.work, `keys-${index}`),
      tokenservice: {
        key: o.keys.keyFile,
        certificate: o.keys.certFile,
        ...(o.publicRepositories ? { publicrepositories: o.publicRepositories } : {}),
      },
      users: { admin: { username: "admin" } },
    },
  };
}

async function startBackend(index: number, o: BackendOptions): Promise<Backend> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const configPath = join(o.work, `config-${index}.yml`);
  writeFileSync(configPath, stringify(backendConfig(index, port, o)));
  const proc = startBackground(process.execPath, [BIN, "serve", configPath], {
    cwd: o.work,
    env: { REGISTRY_KIT_ADMIN_PASSWORD: o.adminPassword, REGISTRY_STORAGE_S3_SECRETKEY: o.rgw.secretAccessKey, NODE_ENV: "production" },
  });
  await waitFor(
    `registry-kit serve #${index} to answer ${url}/v2/`,
    async () => {
      if (proc.exited()) throw new Error(`registry-kit serve #${index} exited:\n${proc.output()}`);
      const res = await fetch(`${url}/v2/`);
      await res.arrayBuffer();
      return res.status === 401;
    },
    90_000,
    () => proc.output().slice(-4000),
  );
  return {
    index,
    port,
    url,
    configPath,
    proc,
    accessLog() {
      const lines: AccessLine[] = [];
      for (const line of proc.output().split("\n")) {
        const m = CLF.exec(line.trim());
        if (m) lines.push({ user: m[1]!, method: m[2]!, target: m[3]!, status: m[4] === "-" ? 0 : Number(m[4]) });
      }
      return lines;
    },
    pids: () => (proc.child.pid === undefined ? [] : descendants(proc.child.pid)),
  };
}

/**
 * Start `count` processes. The first one starts alone, so that it alone
 * creates the administrator in the empty user store (the user store has no
 * cross-process lock; see docs/scaling.md); the others then start together.
 */
export async function startBackends(count: number, o: BackendOptions): Promise<Backend[]> {
  const backends: Backend[] = [];
  try {
    backends.push(await startBackend(0, o));
    const rest = await Promise.allSettled(Array.from({ length: count - 1 }, (_, i) => startBackend(i + 1, o)));
    for (const r of rest) if (r.status === "fulfilled") backends.push(r.value);
    const failed = rest.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
    return backends.sort((a, b) => a.index - b.index);
  } catch (error) {
    await Promise.all(backends.map((b) => b.proc.stop(3_000)));
    throw error;
  }
}

// ---------------------------------------------------------------------------
// nginx

export interface Nginx {
  url: string;
  /** host:port, for docker:// references. */
  host: string;
  proc: Background;
  dir: string;
  /** nginx's own access log: `method uri status upstream request_time`. */
  accessLog(): Array<{ method: string; uri: string; status: number; upstream: string }>;
  pids(): number[];
  stop(): Promise<void>;
}

/** The nginx.conf of docs/scaling.md, with every path in `dir`. */
export function nginxConfig(dir: string, listenPort: number, upstreamPorts: readonly number[], workers = 2): string {
  const asRoot = process.getuid?.() === 0;
  return `# generated by test/interop/helpers/scale-out.ts
${asRoot ? "user root;\n" : ""}daemon off;
master_process on;
worker_processes ${workers};
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  log_format rk '$request_method $request_uri $status $upstream_addr $request_time';
  access_log ${dir}/access.log rk;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;

  # blobs are streamed through, never spooled to disk or limited in size
  client_max_body_size 0;
  proxy_request_buffering off;
  proxy_buffering off;
  proxy_http_version 1.1;
  proxy_read_timeout 900s;
  proxy_send_timeout 900s;
  send_timeout 900s;
  client_body_timeout 900s;

  upstream registry_kit {
${upstreamPorts.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join("\n")}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${listenPort};
    location / {
      proxy_pass http://registry_kit;
      proxy_set_header Host $http_host;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      # a request that reached one process is never replayed on another
      proxy_next_upstream off;
    }
  }
}
`;
}

/** Run nginx in the foreground (non-daemon child) in front of `upstreamPorts`. */
export async function startNginx(upstreamPorts: readonly number[], options: { workers?: number; port?: number } = {}): Promise<Nginx> {
  const bin = requireTool("nginx");
  const tmp = tempDir("scale-nginx");
  const dir = tmp.path;
  const port = options.port ?? (await freePort());
  writeFileSync(join(dir, "nginx.conf"), nginxConfig(dir, port, upstreamPorts, options.workers ?? 2));
  const proc = startBackground(bin, ["-p", dir, "-e", join(dir, "error.log"), "-c", join(dir, "nginx.conf")]);
  const url = `http://127.0.0.1:${port}`;
  const errorLog = () => (existsSync(join(dir, "error.log")) ? readFileSync(join(dir, "error.log"), "utf8").slice(-3000) : "");
  try {
    await waitFor(
      `nginx to proxy ${url}/v2/`,
      async () => {
        if (proc.exited()) throw new Error(`nginx exited:\n${proc.output()}\n${errorLog()}`);
        const res = await fetch(`${url}/v2/`);
        await res.arrayBuffer();
        return res.status === 401;
      },
      20_000,
      () => `${proc.output()}\n${errorLog()}`,
    );
  } catch (error) {
    await proc.stop(2_000);
    tmp.remove();
    throw error;
  }
  return {
    url,
    host: `127.0.0.1:${port}`,
    proc,
    dir,
    accessLog() {
      const file = join(dir, "access.log");
      if (!existsSync(file)) return [];
      return readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => {
        const [method = "", uri = "", status = "0", upstream = ""] = l.split(" ");
        return { method, uri, status: Number(status), upstream };
      });
    },
    pids: () => (proc.child.pid === undefined ? [] : descendants(proc.child.pid)),
    async stop() {
      await proc.stop(3_000);
      tmp.remove();
    },
  };
}

// ---------------------------------------------------------------------------
// CPU accounting from /proc

/** Every descendant of `pid` (children, grandchildren, …), not `pid` itself. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = parents.get(ppid) ?? [];
      list.push(Number(entry));
      parents.set(ppid, list);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const queue = [...(parents.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift()!;
    out.push(next);
    queue.push(...(parents.get(next) ?? []));
  }
  return out;
}

let clockTicks: number | undefined;

/** CPU seconds (user + system) used so far by `pids` (and by their reaped children). */
export function cpuSeconds(pids: readonly number[]): number {
  clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // fields[11..14] = utime stime cutime cstime (stat fields 14..17)
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // exited
    }
  }
  return ticks / clockTicks;
}

// ---------------------------------------------------------------------------
// Images that share layers

export interface Blob {
  digest: string;
  bytes: Buffer;
  mediaType: string;
}

export interface SharedImage {
  /** Local name (OCI layout tag, memory store name). */
  name: string;
  manifestBytes: Buffer;
  manifestDigest: string;
  config: Blob;
  layers: Blob[];
}

/** A gzip'd tar layer of `size` random bytes (incompressible: gzip level 1). */
export function randomLayer(size: number, label: string): Blob {
  const raw = tar([{ path: label }, { path: `${label}/payload.bin`, data: randomBytes(size) }]);
  const bytes = gzipSync(raw, { level: 1 });
  return { digest: sha256(bytes), bytes, mediaType: OCI_LAYER_GZIP };
}

/** An OCI image of `layers` (shared ones included) with its own config. */
export function makeImage(name: string, layers: Blob[]): SharedImage {
  const config = Buffer.from(JSON.stringify({
    architecture: "amd64", os: "linux", created: "2024-01-01T00:00:00Z",
    config: { Labels: { "org.example.registry-kit.image": name, nonce: randomBytes(8).toString("hex") } },
    rootfs: { type: "layers", diff_ids: layers.map((l) => l.digest) },
  }));
  const configBlob: Blob = { digest: sha256(config), bytes: config, mediaType: OCI_CONFIG };
  const manifestBytes = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: { mediaType: OCI_CONFIG, digest: configBlob.digest, size: config.length },
    layers: layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.bytes.length })),
  }, null, 2) + "\n");
  return { name, manifestBytes, manifestDigest: sha256(manifestBytes), config: configBlob, layers };
}

/** Write `images` into one OCI layout (skopeo's `oci:<dir>:<name>`). */
export function writeOciLayout(dir: string, images: readonly SharedImage[]): void {
  const blobs = join(dir, "blobs", "sha256");
  mkdirSync(blobs, { recursive: true });
  for (const img of images) {
    for (const b of [img.config, ...img.layers]) {
      const file = join(blobs, b.digest.slice(7));
      if (!existsSync(file)) writeFileSync(file, b.bytes);
    }
    writeFileSync(join(blobs, img.manifestDigest.slice(7)), img.manifestBytes);
  }
  writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  writeFileSync(join(dir, "index.json"), JSON.stringify({
    schemaVersion: 2,
    manifests: images.map((img) => ({
      mediaType: OCI_MANIFEST, digest: img.manifestDigest, size: img.manifestBytes.length,
      annotations: { "org.opencontainers.image.ref.name": img.name },
    })),
  }));
}

/** A client-side memory store holding `images` under their names. */
export async function memoryStoreOf(images: readonly SharedImage[]): Promise<LocalImageStore & { blobs: Map<string, Uint8Array> }> {
  const store = memoryImageStore();
  for (const img of images) {
    for (const b of [img.config, ...img.layers]) store.blobs.set(b.digest, b.bytes);
    store.blobs.set(img.manifestDigest, img.manifestBytes);
    await store.setName(img.name, { mediaType: OCI_MANIFEST, digest: img.manifestDigest, size: img.manifestBytes.length });
  }
  return store;
}

/** The upload id of a `/v2/<name>/blobs/uploads/<id>` target, if it is one. */
export function uploadId(target: string): string | undefined {
  return /\/blobs\/uploads\/([^/?]+)/.exec(target)?.[1];
}

/** For every upload id seen in the backends' access logs, the set of backends that served it. */
export function uploadsByBackend(backends: readonly Backend[]): Map<string, Set<number>> {
  const map = new Map<string, Set<number>>();
  for (const b of backends) {
    for (const line of b.accessLog()) {
      const id = uploadId(line.target);
      if (!id) continue;
      const set = map.get(id) ?? new Set<number>();
      set.add(b.index);
      map.set(id, set);
    }
  }
  return map;
}
