/**
 * The `storage` section: exactly one driver, `filesystem`, `inmemory`,
 * `s3` or `azure` (`config-storage-azure.ts`; Distribution's key names), beside the driver-independent
 * options (`delete`, `maintenance`, ...) that other sections read.
 *
 * @module
 */
import { isMap, STORAGE_OPTIONS } from "./config-env.js";
import type { ConfigReader } from "./config-reader.js";
import { resolveAzure } from "./config-storage-azure.js";
import type { AllInOneConfig, S3StorageConfig } from "./config-types.js";
import { bool, ConfigError, positiveInt, str } from "./config-values.js";

/** Read the `storage` section: which driver, and its settings. */
export function resolveStorage(reader: ConfigReader): AllInOneConfig["storage"] {
  const { named } = reader;
  const storage = reader.doc.storage;
  if (storage === undefined || storage === null) throw new ConfigError("storage", "a storage driver is required (filesystem, s3, azure or inmemory)");
  if (!isMap(storage)) throw new ConfigError(named("storage"), "expected a map");
  const drivers = Object.keys(storage).filter((k) => !STORAGE_OPTIONS.has(k));
  if (drivers.length !== 1) {
    throw new ConfigError(named("storage"), `exactly one storage driver is required, found ${drivers.length === 0 ? "none" : drivers.join(", ")}` +
      " (REGISTRY_STORAGE=<driver> selects one)");
  }
  if (drivers[0] === "inmemory") return { driver: "inmemory" };
  if (drivers[0] === "s3") return resolveS3(reader);
  if (drivers[0] === "azure") return resolveAzure(reader);
  const fsParams = storage.filesystem;
  const root = isMap(fsParams) ? fsParams.rootdirectory : undefined;
  // registry-kit's own key (Distribution's filesystem driver ignores it): see fsStorage's statOnEventLoop.
  const statOnEventLoop = reader.opt("storage.filesystem.statoneventloop", bool);
  // Distribution's default root, made relative so that a plain config works without root rights.
  return {
    driver: "filesystem",
    rootDirectory: reader.abs(root === undefined || root === null ? "/var/lib/registry" : str(named("storage.filesystem.rootdirectory"), root)),
    ...(statOnEventLoop !== undefined ? { statOnEventLoop } : {}),
  };
}

const MiB = 1024 * 1024;

/** A key of the `storage.s3` section. */
const s3Key = (key: string): string => `storage.s3.${key}`;

/**
 * `storage.s3`, with Distribution's key names. `region` and `bucket` are
 * required (as in Distribution); `accesskey`/`secretkey` default to the
 * `AWS_*` variables; `v4auth: false` and server-side encryption are refused
 * rather than silently dropped.
 */
function resolveS3(reader: ConfigReader): S3StorageConfig {
  const { bucket, region } = s3BucketAndRegion(reader);
  refuseUnsupportedS3(reader);
  const secure = reader.opt(s3Key("secure"), bool) ?? true;
  const { endpoint, explicit } = s3Endpoint(reader, region, secure);
  const credentials = s3Credentials(reader);
  const rootDirectory = s3RootDirectory(reader);
  const partSize = s3PartSize(reader);
  const forcePathStyle = reader.opt(s3Key("forcepathstyle"), bool);
  return {
    driver: "s3",
    bucket,
    region,
    ...(endpoint !== undefined ? { endpoint } : {}),
    // s3Storage() defaults path style on for any endpoint; an AWS endpoint we built keeps virtual-hosted style
    ...(forcePathStyle !== undefined ? { forcePathStyle } : !explicit && endpoint !== undefined ? { forcePathStyle: false } : {}),
    ...credentials,
    ...(rootDirectory !== undefined ? { rootDirectory } : {}),
    ...(partSize !== undefined ? { partSize } : {}),
    allowHttp: !secure,
  };
}

/** `bucket` and `region`: both required, both checked for characters S3 accepts. */
function s3BucketAndRegion({ opt, named }: ConfigReader): { bucket: string; region: string } {
  const bucket = opt(s3Key("bucket"), str);
  if (bucket === undefined) throw new ConfigError(named(s3Key("bucket")), "is required");
  if (bucket.length > 255 || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(bucket)) {
    throw new ConfigError(named(s3Key("bucket")), `not a valid bucket name: ${JSON.stringify(bucket)}`);
  }
  const region = opt(s3Key("region"), str);
  if (region === undefined) {
    throw new ConfigError(named(s3Key("region")), "is required (as in Distribution; radosgw and MinIO accept e.g. us-east-1)");
  }
  if (!/^[A-Za-z0-9-]+$/.test(region)) throw new ConfigError(named(s3Key("region")), `not a valid region: ${JSON.stringify(region)}`);
  return { bucket, region };
}

/** Distribution settings registry-kit cannot honour: refused, not silently dropped. */
function refuseUnsupportedS3({ opt, named }: ConfigReader): void {
  if (opt(s3Key("v4auth"), bool) === false) {
    throw new ConfigError(named(s3Key("v4auth")), "only AWS Signature Version 4 is supported; remove the key or set it to true");
  }
  if (opt(s3Key("encrypt"), bool) === true || opt(s3Key("keyid"), str) !== undefined) {
    const key = opt(s3Key("encrypt"), bool) === true ? s3Key("encrypt") : s3Key("keyid");
    throw new ConfigError(named(key),
      "server-side encryption per request is not supported by registry-kit (refusing to start without it); " +
      "use the bucket's default encryption instead and remove the key");
  }
}

/**
 * `regionendpoint` as an origin (`secure` picks the scheme when it has none);
 * without it, plain-http AWS when `secure: false`, else `undefined` (AWS over
 * https). `explicit` says whether the endpoint came from the file.
 */
function s3Endpoint({ opt, named }: ConfigReader, region: string, secure: boolean): { endpoint?: string; explicit: boolean } {
  const endpointText = opt(s3Key("regionendpoint"), str);
  if (endpointText === undefined) return secure ? { explicit: false } : { endpoint: `http://s3.${region}.amazonaws.com`, explicit: false };
  const key = named(s3Key("regionendpoint"));
  const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(endpointText) ? endpointText : `${secure ? "https" : "http"}://${endpointText}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ConfigError(key, `expected a URL such as "https://s3.example.com", got ${JSON.stringify(endpointText)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(key, `expected an http or https URL, got ${JSON.stringify(endpointText)}`);
  }
  if (url.pathname !== "/" || url.search !== "" || url.username !== "" || url.password !== "") {
    throw new ConfigError(key, "expected only scheme, host and port (the bucket goes in storage.s3.bucket)");
  }
  if (url.protocol === "http:" && secure && !isLoopbackHost(url.hostname)) {
    throw new ConfigError(key, "plain http to a host that is not loopback; use https, or set storage.s3.secure: false to allow it");
  }
  return { endpoint: url.origin, explicit: true };
}

/** `accesskey`/`secretkey` (together), else `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`; `sessiontoken` or `AWS_SESSION_TOKEN`. */
function s3Credentials({ opt, named, env }: ConfigReader): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } {
  const fileKey = opt(s3Key("accesskey"), str);
  const fileSecret = opt(s3Key("secretkey"), str);
  if ((fileKey === undefined) !== (fileSecret === undefined)) {
    throw new ConfigError(named(fileKey === undefined ? s3Key("accesskey") : s3Key("secretkey")), "storage.s3.accesskey and .secretkey must be given together");
  }
  const fileToken = opt(s3Key("sessiontoken"), str);
  if (fileKey !== undefined && fileSecret !== undefined) {
    return { accessKeyId: fileKey, secretAccessKey: fileSecret, ...(fileToken !== undefined ? { sessionToken: fileToken } : {}) };
  }
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    const token = fileToken ?? (env.AWS_SESSION_TOKEN || undefined);
    return { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, ...(token !== undefined ? { sessionToken: token } : {}) };
  }
  throw new ConfigError(named(s3Key("accesskey")),
    "credentials are required: storage.s3.accesskey and .secretkey (or REGISTRY_STORAGE_S3_ACCESSKEY/_SECRETKEY, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)");
}

/** `rootdirectory` as a key prefix without leading or trailing slashes; `undefined` for none (or only slashes). */
function s3RootDirectory({ opt, named }: ConfigReader): string | undefined {
  const rootText = opt(s3Key("rootdirectory"), str);
  if (rootText === undefined) return undefined;
  const trimmed = rootText.replace(/^\/+|\/+$/g, "");
  if (trimmed !== "" && (!/^[A-Za-z0-9._@:+=/-]+$/.test(trimmed) || trimmed.split("/").some((s) => s === "" || s === "." || s === ".."))) {
    throw new ConfigError(named(s3Key("rootdirectory")), `expected a key prefix such as "registry" or "/prod/registry", got ${JSON.stringify(rootText)}`);
  }
  return trimmed !== "" ? trimmed : undefined;
}

/** `chunksize`: the multipart part size, within S3's limits. */
function s3PartSize({ opt, named }: ConfigReader): number | undefined {
  const partSize = opt(s3Key("chunksize"), positiveInt);
  if (partSize !== undefined && (partSize < 5 * MiB || partSize > 5 * 1024 * MiB)) {
    throw new ConfigError(named(s3Key("chunksize")), `must be from 5242880 (5 MiB) to 5368709120 (5 GiB) bytes, got ${partSize}`);
  }
  return partSize;
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
