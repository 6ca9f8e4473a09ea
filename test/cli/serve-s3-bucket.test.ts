/**
 * `registry-kit serve` on radosgw (issue 43): a bucket that does not exist
 * stops start-up (exit 1) with one line saying so and what to correct,
 * instead of a server that starts and fails every request; the existing
 * bucket starts as before. The CLI runs as a child process.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { useRadosgw } from "../storage/helpers/rgw.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
const rgw = useRadosgw({ bucket: "serve-bucket-check" });
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rk-serve-s3-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function config(bucket: string): string {
  const path = join(dir, `${bucket}.yml`);
  writeFileSync(path, stringify({
    version: 0.1,
    http: { addr: "127.0.0.1:0", secret: "serve-s3-bucket" },
    storage: {
      s3: {
        bucket, region: rgw.region, regionendpoint: rgw.endpoint, forcepathstyle: true, secure: false,
        accesskey: rgw.accessKeyId, secretkey: rgw.secretAccessKey,
      },
    },
  }));
  return path;
}

/** Start the CLI; resolve at its banner's last line (then stop it) or at its exit. */
function runServe(configPath: string): Promise<{ out: string; err: string; code: number | null }> {
  const child = spawn(process.execPath, [BIN, "serve", configPath], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
    if (out.includes("  ready;")) child.kill("SIGTERM");
  });
  return new Promise((resolve) => child.once("close", (code) => resolve({ out, err, code })));
}

describe("registry-kit serve on S3: the bucket checked at start-up", () => {
  it("a missing bucket stops start-up with the reason", async () => {
    const run = await runServe(config("no-such-bucket"));
    expect(run.code, run.err).toBe(1);
    expect(run.out).not.toContain("listening on");
    expect(run.err).toMatch(/^registry-kit: start-up failed: storage\.s3: cannot list the bucket "no-such-bucket" at http:\/\/127\.0\.0\.1:\d+: s3 list: 404 NoSuchBucket: the bucket does not exist; create the bucket \(registry-kit does not create one\), or correct storage\.s3\.bucket, regionendpoint, region and the credentials$/m);
  });

  it("the existing bucket starts", async () => {
    const run = await runServe(config("serve-bucket-check"));
    expect(run.out, run.err).toContain("storage         s3 bucket serve-bucket-check");
    expect(run.code).toBe(0);
  });
});
