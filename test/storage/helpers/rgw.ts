/**
 * A real S3 server for tests: Ceph radosgw on loopback, started by
 * `scripts/s3-server/start-rgw.sh` in a temp directory with free ports, one per
 * test file. Missing binaries fail the test with an install hint (never skip).
 *
 * ```ts
 * const rgw = useRadosgw();            // registers beforeAll/afterAll
 * s3Storage({ ...rgw.options(), rootDirectory: "t1" });
 * ```
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { AwsV4Signer } from "aws4fetch";
import { afterAll, beforeAll } from "vitest";
import type { StorageDriver } from "../../../src/storage/driver.js";
import type { S3StorageOptions } from "../../../src/storage/s3/index.js";
import { childText, children, parseXml } from "../../../src/storage/s3/xml.js";

const run = promisify(execFile);
const SCRIPTS = resolve(import.meta.dirname, "../../../scripts/s3-server");
const INSTALL_HINT =
  "radosgw is needed for the S3 tests: DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd curl procps";

export interface Radosgw {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  bucket: string;
  /** RGW_DIR of this server (logs under `log/`). */
  dir: string;
  /** Driver options for this server and bucket. */
  options(): S3StorageOptions;
  /** A signed request straight to the server (for bucket setup and inspection). */
  request(method: string, path: string, init?: { headers?: Record<string, string>; body?: string }): Promise<Response>;
  /** Resident memory of the radosgw and ceph-osd processes, in bytes. */
  serverRss(): Promise<number>;
}

async function findMissing(): Promise<string[]> {
  const missing: string[] = [];
  for (const bin of ["radosgw", "ceph-mon", "ceph-osd", "radosgw-admin", "curl", "python3"]) {
    try {
      await run("sh", ["-c", `command -v ${bin}`]);
    } catch {
      missing.push(bin);
    }
  }
  return missing;
}

/** Start radosgw before the file's tests, create a bucket, stop it after them. */
export function useRadosgw(options: { bucket?: string; osdBytes?: number } = {}): Radosgw {
  let dir = "";
  let env: Record<string, string> = {};
  const bucket = options.bucket ?? "registry-kit-test";

  const rgw: Radosgw = {
    get endpoint() {
      return env.S3_ENDPOINT!;
    },
    get accessKeyId() {
      return env.AWS_ACCESS_KEY_ID!;
    },
    get secretAccessKey() {
      return env.AWS_SECRET_ACCESS_KEY!;
    },
    get region() {
      return env.AWS_DEFAULT_REGION ?? "us-east-1";
    },
    bucket,
    get dir() {
      return dir;
    },
    options: () => ({
      bucket,
      endpoint: rgw.endpoint,
      forcePathStyle: true,
      accessKeyId: rgw.accessKeyId,
      secretAccessKey: rgw.secretAccessKey,
      region: rgw.region,
    }),
    async request(method, path, init = {}) {
      const signed = await new AwsV4Signer({
        method,
        url: rgw.endpoint + path,
        headers: init.headers ?? {},
        ...(init.body !== undefined ? { body: init.body } : {}),
        accessKeyId: rgw.accessKeyId,
        secretAccessKey: rgw.secretAccessKey,
        service: "s3",
        region: rgw.region,
      }).sign();
      return fetch(signed.url, { method, headers: signed.headers, ...(init.body !== undefined ? { body: init.body } : {}) });
    },
    async serverRss() {
      const pids = (await readFile(join(dir, "pids"), "utf8")).trim().split("\n").map((l) => l.split(" ")[0]);
      let total = 0;
      for (const pid of pids) {
        const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
        const match = /VmRSS:\s+(\d+) kB/.exec(status);
        if (match) total += Number(match[1]) * 1024;
      }
      return total;
    },
  };

  beforeAll(async () => {
    const missing = await findMissing();
    if (missing.length > 0) throw new Error(`missing ${missing.join(", ")}. ${INSTALL_HINT}`);
    dir = join(await mkdtemp(join(tmpdir(), "registry-kit-rgw-")), "rgw");
    const childEnv: NodeJS.ProcessEnv = { ...process.env, RGW_DIR: dir };
    if (options.osdBytes) childEnv.RGW_OSD_BYTES = String(options.osdBytes);
    try {
      await run("bash", [join(SCRIPTS, "start-rgw.sh")], { env: childEnv, timeout: 120_000 });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? "";
      throw new Error(`start-rgw.sh failed: ${stderr.slice(-2000)}`);
    }
    const text = await readFile(join(dir, "env"), "utf8");
    env = Object.fromEntries(
      text.split("\n").filter((l) => l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    const created = await rgw.request("PUT", `/${bucket}`);
    if (!created.ok) throw new Error(`creating bucket ${bucket}: ${created.status} ${await created.text()}`);
  }, 120_000);

  afterAll(async () => {
    if (!dir) return;
    await run("bash", [join(SCRIPTS, "stop-rgw.sh")], { env: { ...process.env, RGW_DIR: dir }, timeout: 60_000 }).catch(() => {});
    await rm(resolve(dir, ".."), { recursive: true, force: true });
  }, 60_000);

  return rgw;
}

let counter = 0;

/** A fresh root directory name for one test's driver. */
export function freshRoot(label = "t"): string {
  return `${label}-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
}

/** Every raw key in the server's bucket under `prefix` (part and lock objects included). */
export async function rawKeys(rgw: Radosgw, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const query = `list-type=2&prefix=${encodeURIComponent(prefix)}${token ? `&continuation-token=${encodeURIComponent(token)}` : ""}`;
    const response = await rgw.request("GET", `/${rgw.bucket}?${query}`);
    const root = parseXml(await response.text());
    keys.push(...children(root, "Contents").map((c) => childText(c, "Key")!));
    token = childText(root, "IsTruncated") === "true" ? childText(root, "NextContinuationToken") : undefined;
  } while (token);
  return keys;
}

/** The bytes of an object (or of a range of it) read through a driver. */
export async function readObject(store: StorageDriver, key: string, range?: { offset: number; length?: number }): Promise<Buffer> {
  const stream = await store.read(key, range);
  if (!stream) throw new Error(`no object ${key}`);
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
