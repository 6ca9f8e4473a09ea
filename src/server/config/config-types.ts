/**
 * The shape of the all-in-one server's configuration once validated and
 * defaulted by `resolveConfig()`. Each field names the `config.yml` key it
 * comes from; docs/configuration.md is the reference of the keys.
 *
 * @module
 */
import type { CliLogLevel } from "./config-values.js";
import type { DebugConfig, HealthConfig } from "./config-debug.js";
import type { UploadsConfig } from "./config-uploads.js";
import type { ProxyUpstreamConfig } from "./config-proxy.js";
import type { NotificationsConfig } from "./config-notifications.js";
import type { VerifyScheduleConfig } from "./config-verify.js";
import type { GcScheduleConfig, PolicyConfig } from "./config-policy.js";
import type { ManifestValidation, RetentionRule } from "../../registry/index.js";

/** The registry's Basic authentication against an htpasswd file (`auth.htpasswd`). */
export interface HtpasswdAuthConfig {
  /** `auth.htpasswd.realm`: the realm of the `Www-Authenticate: Basic` challenge. */
  realm: string;
  /** `auth.htpasswd.path`: the htpasswd file (bcrypt hashes only), absolute. */
  path: string;
}

/** The registry's token authentication (`auth.token`). */
export interface TokenAuthConfig {
  /** Token endpoint URL; `undefined` = derived from the listen address once bound. */
  realm?: string;
  /** `auth.token.service`: the audience tokens must name (`aud`), and the `service` of the challenge. */
  service: string;
  /** `auth.token.issuer`: the `iss` tokens must carry. */
  issuer: string;
  /** Absolute path of the PEM bundle; `undefined` (and no `jwks`) = our own token service's certificate. */
  rootCertBundle?: string;
  /** `auth.token.jwks`: absolute path of a JWKS file whose keys are trusted by `kid`, beside or instead of the bundle. */
  jwks?: string;
  /** `auth.token.signingalgorithms`: the JWS algorithms accepted; `undefined` = RS256/384/512, ES256/384/512. */
  signingAlgorithms?: string[];
  /** `auth.token.autoredirect`: the challenge's realm is built from each request's host and `autoRedirectPath`. */
  autoRedirect?: boolean;
  /** `auth.token.autoredirectpath`; `undefined` = our token service's path, else Distribution's `/auth/token`. */
  autoRedirectPath?: string;
}

/** registry-kit's own token service (`registrykit.tokenservice`). */
export interface TokenServiceConfig {
  /** The path the token endpoint answers on (default `/service/token`). */
  path: string;
  /** Token lifetime in seconds. */
  expiration: number;
  /** Repository globs anyone, anonymous callers included, may pull (`*` = all). */
  publicRepositories: string[];
  /** PEM private key file; `undefined` = generated under the key directory. */
  key?: string;
  /** PEM certificate file matching `key`; required with `key`. */
  certificate?: string;
  /**
   * `registrykit.tokenservice.x5c: false`: leave the certificate chain out of
   * token headers (`kid` only), for consumers that trust our published JWKS
   * and refuse an `x5c` they cannot chain (Distribution 3). Default: included.
   */
  x5c?: false;
}

/** The management API (`registrykit.users`). */
export interface UsersConfig {
  /** The routes are `<prefix>/users…`. */
  prefix: string;
  /** Whether anyone may create an account (else only administrators create them). */
  selfRegistration: boolean;
  /** The name of the administrator created when the user store is empty. */
  adminUsername: string;
  /** Bootstrap password of the first administrator; generated when absent. */
  adminPassword?: string;
}

/**
 * `storage.s3`: a bucket of an S3-compatible store, mapped onto
 * `s3Storage()` options (docs/storage-s3.md). Credentials are resolved here,
 * from the file or from `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`.
 */
export interface S3StorageConfig {
  /** Which storage section this is. */
  driver: "s3";
  /** The bucket's name. */
  bucket: string;
  /** The region requests are signed for. */
  region: string;
  /** `regionendpoint` with a scheme; `undefined` = AWS S3 in `region`. */
  endpoint?: string;
  /** `forcepathstyle`: address the bucket in the path, not the host name. */
  forcePathStyle?: boolean;
  /** `accesskey`, or `AWS_ACCESS_KEY_ID`. */
  accessKeyId: string;
  /** `secretkey`, or `AWS_SECRET_ACCESS_KEY`. */
  secretAccessKey: string;
  /** `sessiontoken`, or `AWS_SESSION_TOKEN`, for temporary credentials. */
  sessionToken?: string;
  /** Key prefix inside the bucket, without leading or trailing slashes. */
  rootDirectory?: string;
  /** `chunksize`: multipart part size in bytes. */
  partSize?: number;
  /** `secure: false`: plain http is allowed to a host that is not loopback. */
  allowHttp: boolean;
}

/**
 * `storage.azure`: a container of an Azure storage account (or Azurite),
 * mapped onto `azureStorage()` options (docs/storage-azure.md).
 */
export interface AzureStorageConfig {
  /** Which storage section this is. */
  driver: "azure";
  /** `accountname`. */
  accountName: string;
  /** `accountkey` (base64). */
  accountKey: string;
  /** `container`: it must exist. */
  container: string;
  /** `realm`: the domain of the default service URL (`core.windows.net`). */
  realm?: string;
  /** `serviceurl`: the blob service URL, e.g. Azurite's `http://127.0.0.1:10000/devstoreaccount1`. */
  serviceURL?: string;
  /** Blob name prefix inside the container, without leading or trailing slashes. */
  rootDirectory?: string;
  /** `maxretries`: retries of a failed request. */
  maxRetries?: number;
}

/** The web page's part of the configuration (`registrykit.ui`). */
export interface UiConfig {
  /** Where the page answers, e.g. `/ui`. */
  prefix: string;
}

/** `http.tls`: files are absolute paths, read when the server starts. */
export interface HttpTlsConfig {
  /** `certificate`: the PEM certificate chain file. */
  certificate: string;
  /** `key`: the PEM private key file. */
  key: string;
  /** `clientcas`: PEM files of the CAs client certificates must chain to; when any, a client certificate is required. */
  clientCas: string[];
  /** `minimumtls` as Node names it (default `TLSv1.2`). */
  minimumTls: "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3";
  /** `ciphersuites` mapped to an OpenSSL cipher list; absent = Node's defaults. */
  ciphers?: string;
}

/** The validated, defaulted configuration `createAllInOne()` runs from. */
export interface AllInOneConfig {
  /** Whether this came from a file (`serve CONFIG`) or the built-in defaults. */
  source: "file" | "defaults";
  /** The `http` section: where to listen and what to send. */
  http: {
    /** The host or address to listen on (from `http.addr`). */
    host: string;
    /** The port to listen on (from `http.addr`). */
    port: number;
    /** `http.host`: the externally reachable base URL, used for the default realm. */
    publicUrl?: string;
    /**
     * `http.prefix`: the path every route is mounted under (`/my/registry`, no
     * trailing slash; absent or `""` for none): the registry at `<prefix>/v2/`,
     * and the token service, JWKS, users API, its administration routes and
     * the web page each at `<prefix>` + its own path. `/debug` stays on its
     * own listener.
     */
    prefix?: string;
    /** Upload `_state` HMAC secret; `undefined` = generated once and kept in the key directory. */
    secret?: string;
    /** `http.headers`: extra headers on every response, as name/value pairs. */
    headers: [string, string][];
    /** `registrykit.hsts`: the `Strict-Transport-Security` of https responses (default one year with `tls`); absent: none. */
    hsts?: string;
    /** Milliseconds in-flight requests get at shutdown. */
    drainTimeout: number;
    /** Trust `X-Forwarded-Proto`/`-Host`. */
    trustProxy: boolean;
    /** `http.debug`: the debug listener (`/debug/health`, metrics); `undefined` without `http.debug.addr`. */
    debug?: DebugConfig;
    /** `http.tls`: serve https; absent for plain http. */
    tls?: HttpTlsConfig;
    /** HTTP/2 over TLS by ALPN (`http.http2.disabled` turns it off). Only with `tls`. */
    http2: boolean;
    /** `http.h2c.enabled`: cleartext HTTP/2 (prior knowledge) beside HTTP/1.1. Only without `tls`. */
    h2c: boolean;
  };
  /** The `health` section: present when it configures at least one check. */
  health?: HealthConfig;
  /**
   * Where blobs and manifests live: `storage.filesystem` (files under
   * `rootDirectory`), `storage.inmemory` (lost at exit), `storage.s3` or
   * `storage.azure`.
   */
  storage:
    | {
        /** `storage.filesystem`. */
        driver: "filesystem";
        /** Absolute path of the directory that holds the registry's files. */
        rootDirectory: string;
        /** `storage.filesystem.statoneventloop` (registry-kit's own): see `FsStorageOptions.statOnEventLoop`. */
        statOnEventLoop?: boolean;
      }
    | {
        /** `storage.inmemory`. */
        driver: "inmemory";
      }
    | S3StorageConfig
    | AzureStorageConfig;
  /** `storage.delete.enabled`: whether DELETE of manifests and blobs is allowed. */
  deleteEnabled: boolean;
  /**
   * Blob GETs answer 307 to a presigned URL when the driver can give one (S3, Azure);
   * `storage.redirect.disable: true` turns it off. Default on, as in Distribution.
   */
  redirect: boolean;
  /** `storage.maintenance.readonly.enabled`: refuse every write (405), serve reads. Default false. */
  readOnly?: boolean;
  /**
   * The `validation` section as `createRegistry`'s `manifestValidation`
   * (layer URLs, index children). `resolveConfig` always sets it, to
   * Distribution's default when the section is absent (no layer URL
   * accepted); absent here, the library's default.
   */
  validation?: ManifestValidation;
  /** `catalog.maxentries`: the largest page `/v2/_catalog` returns. */
  catalogMaxEntries: number;
  /** The `log` section. */
  log: {
    /** `log.level`, Distribution's names mapped onto four levels. */
    level: CliLogLevel;
    /** Whether to write an access log line per request (`log.accesslog.disabled`, inverted). */
    accessLog: boolean;
  };
  /** Token auth for the registry; `undefined` = no authentication at all. */
  auth?: TokenAuthConfig;
  /** Basic auth against an htpasswd file; never together with `auth`. */
  htpasswd?: HtpasswdAuthConfig;
  /** Our own token service; `undefined` = not served (an external one, or none). */
  tokenService?: TokenServiceConfig;
  /** The management API; `undefined` = not served. */
  users?: UsersConfig;
  /**
   * The web page (`registrykit.ui`): its mount path. Set when users and our
   * own token service are on and `registrykit.ui.enabled` is not false.
   */
  ui?: UiConfig;
  /** Signing key, certificate and upload secret live here. */
  keyDirectory: string;
  /**
   * True when {@link keyDirectory} is only the default of a config file (no
   * `registrykit.keydirectory`, no `REGISTRY_KIT_DATA`): when it cannot be
   * created or written, the upload secret is a random one kept in memory, as
   * Distribution does without `http.secret`, instead of a start-up error.
   */
  keyDirectoryOptional?: boolean;
  /** The periodic blob verification (`registrykit.verify`); `undefined` = off. */
  verify?: VerifyScheduleConfig;
  /** Upload limits and the purge of abandoned uploads. */
  uploads: UploadsConfig;
  /** The pull-through cache's upstreams (`proxy`, `registrykit.proxy.upstreams`); absent: no cache. */
  proxy?: ProxyUpstreamConfig[];
  /** Webhook notifications (`notifications.endpoints`); absent when none is configured. */
  notifications?: NotificationsConfig;
  /** Write policies (`registrykit.policy`: immutable tags, quotas); absent when none. */
  policy?: PolicyConfig;
  /** Retention rules (`registrykit.retention`), applied by every garbage collection; absent when none. */
  retention?: RetentionRule[];
  /** Scheduled garbage collection (`registrykit.gc`); absent: not run by the server. */
  gc?: GcScheduleConfig;
}

/** What `resolveConfig()` needs. */
export interface ResolveInput {
  /** The parsed config file, or `undefined` for the built-in defaults. */
  document?: unknown;
  /**
   * The environment: `REGISTRY_*` overrides, `HOST`/`PORT`/`REGISTRY_KIT_DATA`
   * for the defaults, AWS credentials for S3. Usually `process.env`.
   */
  env?: Record<string, string | undefined>;
  /** Base for relative paths. */
  cwd: string;
}

/** The configuration and the warnings to log (unknown and ignored keys). */
export interface Resolved {
  /** The configuration to run. */
  config: AllInOneConfig;
  /** One line per unknown or ignored key, to log at start-up. */
  warnings: string[];
}
