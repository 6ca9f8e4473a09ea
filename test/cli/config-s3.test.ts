/**
 * `storage.s3` in the all-in-one server's config.yml: Distribution's key
 * names, `REGISTRY_STORAGE_S3_*` overrides, validation naming the key, and the
 * driver the composition opens from it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { ConfigError, parseConfigText, resolveConfig, type S3StorageConfig } from "../../src/server/config/config.js";
import { configError } from "./config-error.js";

const cwd = "/srv/app";
const CREDS = "accesskey: AKIAEXAMPLE\n    secretkey: s3cr3t-example";

function resolve(yaml: string, env: Record<string, string> = {}) {
  return resolveConfig({ document: parseConfigText(yaml), env, cwd });
}

function s3(yaml: string, env: Record<string, string> = {}): S3StorageConfig {
  const { config } = resolve(yaml, env);
  expect(config.storage.driver).toBe("s3");
  return config.storage as S3StorageConfig;
}

function fails(yaml: string, env: Record<string, string> = {}): ConfigError {
  return configError(() => resolve(yaml, env));
}

/** A `storage:` section with an s3 driver of these extra lines. */
const storage = (lines: string, creds = CREDS) => `
version: 0.1
storage:
  s3:
    bucket: registry
    region: us-east-1
    ${creds}
${lines
  .split("\n")
  .filter(Boolean)
  .map((l) => `    ${l}`)
  .join("\n")}
`;

describe("storage.s3 with Distribution's key names", () => {
  it("reads every supported key", () => {
    const config = s3(storage(`
regionendpoint: http://127.0.0.1:7480
forcepathstyle: true
rootdirectory: /prod/registry/
chunksize: 16777216
secure: true
v4auth: true
encrypt: false`));
    expect(config).toEqual({
      driver: "s3",
      bucket: "registry",
      region: "us-east-1",
      endpoint: "http://127.0.0.1:7480",
      forcePathStyle: true,
      accessKeyId: "AKIAEXAMPLE",
      secretAccessKey: "s3cr3t-example",
      rootDirectory: "prod/registry",
      partSize: 16 * 1024 * 1024,
      allowHttp: false,
    });
  });

  it("defaults to AWS S3 in the region, leaving path style and part size to the driver", () => {
    expect(s3(storage(""))).toEqual({
      driver: "s3", bucket: "registry", region: "us-east-1", accessKeyId: "AKIAEXAMPLE", secretAccessKey: "s3cr3t-example", allowHttp: false,
    });
  });

  it("adds the scheme to an endpoint without one: https, or http with secure: false", () => {
    expect(s3(storage("regionendpoint: s3.example.com:9000")).endpoint).toBe("https://s3.example.com:9000");
    const plain = s3(storage("regionendpoint: minio.internal:9000\nsecure: false"));
    expect(plain).toMatchObject({ endpoint: "http://minio.internal:9000", allowHttp: true });
    expect(plain.forcePathStyle).toBeUndefined();
    // secure: false without an endpoint: AWS over http, still virtual-hosted
    expect(s3(storage("secure: false"))).toMatchObject({ endpoint: "http://s3.us-east-1.amazonaws.com", forcePathStyle: false, allowHttp: true });
  });

  it("treats rootdirectory / as no prefix", () => {
    expect(s3(storage("rootdirectory: /")).rootDirectory).toBeUndefined();
  });

  it("takes the credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN when the file has none", () => {
    const config = s3(storage("", ""), { AWS_ACCESS_KEY_ID: "env-id", AWS_SECRET_ACCESS_KEY: "env-secret", AWS_SESSION_TOKEN: "env-token" });
    expect(config).toMatchObject({ accessKeyId: "env-id", secretAccessKey: "env-secret", sessionToken: "env-token" });
    // keys in the file win, and a session token in the environment does not belong to them
    const fromFile = s3(storage(""), { AWS_ACCESS_KEY_ID: "env-id", AWS_SECRET_ACCESS_KEY: "env-secret", AWS_SESSION_TOKEN: "env-token" });
    expect(fromFile).toMatchObject({ accessKeyId: "AKIAEXAMPLE", secretAccessKey: "s3cr3t-example" });
    expect(fromFile.sessionToken).toBeUndefined();
    expect(s3(storage("sessiontoken: tok")).sessionToken).toBe("tok");
  });

  it("warns about Distribution's S3 keys registry-kit does not implement, and goes on", () => {
    const { warnings } = resolve(storage("storageclass: REDUCED_REDUNDANCY\nskipverify: true\nmultipartcopychunksize: 33554432\nfrobnicate: 1"));
    expect(warnings).toEqual(expect.arrayContaining([
      "storage.s3.storageclass: not supported by registry-kit, ignored",
      "storage.s3.skipverify: not supported by registry-kit, ignored",
      "storage.s3.multipartcopychunksize: not supported by registry-kit, ignored",
      "storage.s3.frobnicate: unknown key, ignored",
    ]));
  });

  it("keeps the users API on S3 without the in-memory warning", () => {
    const { warnings, config } = resolve(`${storage("")}registrykit: {tokenservice: {}, users: {}}\n`);
    expect(config.users).toBeDefined();
    expect(warnings.filter((w) => w.includes("users"))).toEqual([]);
  });
});

describe("REGISTRY_STORAGE_S3_* overrides", () => {
  it("configure the whole driver from the environment, typed by the key", () => {
    const config = s3("version: 0.1\nstorage: {filesystem: {rootdirectory: /var/lib/registry}, delete: {enabled: true}}\n", {
      REGISTRY_STORAGE: "s3",
      REGISTRY_STORAGE_S3_BUCKET: "from-env",
      REGISTRY_STORAGE_S3_REGION: "eu-west-1",
      REGISTRY_STORAGE_S3_REGIONENDPOINT: "https://objects.example.com",
      REGISTRY_STORAGE_S3_ACCESSKEY: "id",
      REGISTRY_STORAGE_S3_SECRETKEY: "secret",
      REGISTRY_STORAGE_S3_FORCEPATHSTYLE: "false",
      REGISTRY_STORAGE_S3_CHUNKSIZE: "10485760",
      REGISTRY_STORAGE_S3_ROOTDIRECTORY: "/reg",
    });
    expect(config).toEqual({
      driver: "s3", bucket: "from-env", region: "eu-west-1", endpoint: "https://objects.example.com", forcePathStyle: false,
      accessKeyId: "id", secretAccessKey: "secret", rootDirectory: "reg", partSize: 10 * 1024 * 1024, allowHttp: false,
    });
    expect(resolve("version: 0.1\nstorage: {delete: {enabled: true}}\n", {
      REGISTRY_STORAGE: "s3", REGISTRY_STORAGE_S3_BUCKET: "b", REGISTRY_STORAGE_S3_REGION: "r",
      AWS_ACCESS_KEY_ID: "id", AWS_SECRET_ACCESS_KEY: "secret",
    }).config.deleteEnabled).toBe(true);
  });

  it("override single keys of the file", () => {
    expect(s3(storage(""), { REGISTRY_STORAGE_S3_SECRETKEY: "rotated" }).secretAccessKey).toBe("rotated");
  });

  it("name the variable when its value is invalid", () => {
    const error = fails(storage(""), { REGISTRY_STORAGE_S3_CHUNKSIZE: "1024" });
    expect(error.key).toBe("storage.s3.chunksize (from REGISTRY_STORAGE_S3_CHUNKSIZE)");
    expect(error.message).toMatch(/5242880 \(5 MiB\)/);
  });
});

describe("invalid storage.s3 stops start-up with the key named", () => {
  it.each([
    ["version: 0.1\nstorage: {s3: {region: r, accesskey: a, secretkey: s}}", "storage.s3.bucket"],
    ["version: 0.1\nstorage: {s3: {bucket: 'a/b', region: r, accesskey: a, secretkey: s}}", "storage.s3.bucket"],
    ["version: 0.1\nstorage: {s3: {bucket: b, accesskey: a, secretkey: s}}", "storage.s3.region"],
    ["version: 0.1\nstorage: {s3: {bucket: b, region: 'us east', accesskey: a, secretkey: s}}", "storage.s3.region"],
    ["version: 0.1\nstorage: {s3: {bucket: b, region: r}}", "storage.s3.accesskey"],
    ["version: 0.1\nstorage: {s3: {bucket: b, region: r, accesskey: a}}", "storage.s3.secretkey"],
    ["version: 0.1\nstorage: {s3: {bucket: b, region: r, secretkey: s}}", "storage.s3.accesskey"],
    ["version: 0.1\nstorage: {s3: nope}", "storage.s3"],
    [storage("regionendpoint: 'ftp://x'"), "storage.s3.regionendpoint"],
    [storage("regionendpoint: 'http://[bad'"), "storage.s3.regionendpoint"],
    [storage("regionendpoint: 'https://s3.example.com/registry'"), "storage.s3.regionendpoint"],
    [storage("regionendpoint: 'http://s3.example.com'"), "storage.s3.regionendpoint"],
    [storage("chunksize: 1048576"), "storage.s3.chunksize"],
    [storage("chunksize: 6000000000"), "storage.s3.chunksize"],
    [storage("chunksize: big"), "storage.s3.chunksize"],
    [storage("rootdirectory: 'a/../b'"), "storage.s3.rootdirectory"],
    [storage("rootdirectory: 'a b'"), "storage.s3.rootdirectory"],
    [storage("forcepathstyle: maybe"), "storage.s3.forcepathstyle"],
    [storage("secure: 1"), "storage.s3.secure"],
    [storage("v4auth: false"), "storage.s3.v4auth"],
    [storage("encrypt: true"), "storage.s3.encrypt"],
    [storage("keyid: arn:aws:kms:us-east-1:1:key/x"), "storage.s3.keyid"],
  ])("%s → %s", (yaml, key) => {
    expect(fails(yaml).key).toBe(key);
  });

  it("never echoes the credentials", () => {
    const error = fails(storage("chunksize: 1"));
    expect(error.message).not.toMatch(/AKIAEXAMPLE|s3cr3t-example/);
    const plain = fails(storage("regionendpoint: 'http://s3.example.com'"));
    expect(plain.message).toMatch(/secure: false/);
    expect(plain.message).not.toMatch(/s3cr3t-example/);
  });

  it("accepts plain http to loopback, as the driver does", () => {
    for (const host of ["127.0.0.1:7480", "localhost:9000", "[::1]:9000"]) {
      expect(s3(storage(`regionendpoint: 'http://${host}'`)).allowHttp).toBe(false);
    }
  });
});

/** An S3 endpoint in `fetch`: ListObjectsV2 answers `status` with `xml` (the start-up check of the bucket). */
function s3Answers(status: number, xml: string) {
  return vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(xml, { status, headers: { "content-type": "application/xml" } }));
}
const EMPTY_LISTING = '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>registry</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>';

describe("the composition opens the S3 driver", () => {
  afterEach(() => vi.restoreAllMocks());

  it("from storage.s3, and names bucket and endpoint (never the keys) in the banner info", async () => {
    const listed = s3Answers(200, EMPTY_LISTING);
    const { config } = resolve(storage("regionendpoint: http://127.0.0.1:9\nrootdirectory: prod"));
    const app = await createAllInOne({ ...config, http: { ...config.http, secret: "shared-secret" } });
    try {
      expect(app.info.storage).toBe("s3 bucket registry at http://127.0.0.1:9, prefix prod/; blob GETs redirect to presigned URLs");
      expect(app.info.storage).not.toMatch(/AKIAEXAMPLE|s3cr3t/);
      expect(app.info.uploadSecret).toEqual({ source: "config", created: false });
      // The bucket was listed once at start-up (issue 43).
      expect(listed.mock.calls.map(([url]) => String(url))).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:9\/registry\?list-type=2&.*prefix=prod%2Frepositories%2F/)]);
    } finally {
      await app.close();
    }
  });

  it("stops start-up when the bucket does not exist, saying so and what to correct (issue 43)", async () => {
    s3Answers(404, '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>');
    const { config } = resolve(storage("regionendpoint: http://127.0.0.1:9"));
    await expect(createAllInOne({ ...config, http: { ...config.http, secret: "shared-secret" } })).rejects.toThrow(
      /^storage\.s3: cannot list the bucket "registry" at http:\/\/127\.0\.0\.1:9: .*404 NoSuchBucket.*the bucket does not exist; create the bucket \(registry-kit does not create one\), or correct storage\.s3\.bucket/,
    );
  });

  it("stops start-up when the credentials are refused (403)", async () => {
    s3Answers(403, '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>');
    const { config } = resolve(storage("regionendpoint: http://127.0.0.1:9"));
    await expect(createAllInOne({ ...config, http: { ...config.http, secret: "shared-secret" } })).rejects.toThrow(/403 InvalidAccessKeyId.*check the credentials/);
  });
});
