/**
 * An S3 store that refuses writes over a quota (radosgw's bucket quota answers
 * 403 QuotaExceeded) is a full storage: the driver says `no_space` and the
 * registry answers 507, not 500, and stores nothing.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, it } from "vitest";
import { createRegistry } from "../../src/registry/index.js";
import { StorageError, checked } from "../../src/storage/driver.js";
import { s3Storage } from "../../src/storage/s3/index.js";
import { freshRoot, useRadosgw } from "./helpers/rgw.js";

const run = promisify(execFile);
const BUCKET = "quota-test";
const rgw = useRadosgw({ bucket: BUCKET });

beforeAll(async () => {
  const env = { ...process.env, CEPH_CONF: /CEPH_CONF=(.*)/.exec(await readFile(join(rgw.dir, "env"), "utf8"))![1]! };
  await run("radosgw-admin", ["quota", "set", "--quota-scope=bucket", `--bucket=${BUCKET}`, "--max-size=65536"], { env });
  await run("radosgw-admin", ["quota", "enable", "--quota-scope=bucket", `--bucket=${BUCKET}`], { env });
}, 60_000);

it("a write over the bucket quota is no_space, and the registry answers 507 with nothing stored", async () => {
  const storage = checked(s3Storage({ ...rgw.options(), rootDirectory: freshRoot("quota") }));
  const error = await storage.write("big", new Uint8Array(200_000)).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(StorageError);
  expect((error as StorageError).code).toBe("no_space");

  const registry = createRegistry({ storage, uploadSecret: "quota" });
  const body = new Uint8Array(200_000).fill(1);
  const { createHash } = await import("node:crypto");
  const digest = `sha256:${createHash("sha256").update(body).digest("hex")}`;
  const response = await registry(new Request(`http://reg.test/v2/q/app/blobs/uploads/?digest=${digest}`, { method: "POST", body }));
  expect(response.status).toBe(507);
  const json = (await response.json()) as { errors: { code: string; message: string }[] };
  expect(json.errors[0]!.message).toMatch(/storage is full/);
  expect((await storage.list("blobs")).keys).toEqual([]);
});
