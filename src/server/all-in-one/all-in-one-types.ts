/**
 * The types of the all-in-one composition: what `createAllInOne()` takes
 * besides the configuration, and what it returns (the handler and the
 * {@link AllInOneInfo} a banner prints).
 *
 * @module
 */
import type { ScryptParams } from "../../users/index.js";
import type { EventHook } from "../../events/hook.js";
import type { LogHook } from "../../http/log.js";
import type { StorageDriver } from "../../storage/driver.js";
import type { ImmutableTagPatterns, QuotaLimits } from "../../registry/index.js";

/** Extra inputs of `createAllInOne()`. */
export interface AllInOneOptions {
  /**
   * The server's base URL once bound (e.g. `http://127.0.0.1:41233`), used
   * for the default token realm when neither `auth.token.realm` nor
   * `http.host` is set.
   */
  origin?: string;
  /** Receives the services' log events. */
  log?: LogHook;
  /** Use this storage instead of the configured one (tests). */
  storage?: StorageDriver;
  /** Receives the events of the registry, the token service and the management API (the configured `notifications` get only the registry's). */
  onEvent?: EventHook;
  /**
   * The scrypt cost of the password hashes this server makes (the first
   * administrator, users created through the management API) and of the
   * unknown-user check. Default `DEFAULT_SCRYPT` of `registry-kit/users`; tests
   * lower it to run fast. Existing hashes keep the cost they were made with.
   */
  scrypt?: Partial<ScryptParams>;
}

/** What the server runs, for the banner and for tests. */
export interface AllInOneInfo {
  /** Where the registry answers: `/v2/`, or `<http.prefix>/v2/`. */
  registryPath: string;
  /** The storage in words, e.g. `filesystem /srv/registry`. */
  storage: string;
  /** The directory of the signing key, certificate and upload secret. */
  keyDirectory: string;
  /** How the registry authenticates. */
  auth:
    | {
        /** No authentication: anyone may pull and push. */
        mode: "none";
      }
    | {
        /** Basic auth against an htpasswd file (`auth.htpasswd`). */
        mode: "htpasswd";
        /** The realm of the Basic challenge. */
        realm: string;
        /** The htpasswd file. */
        path: string;
      }
    | {
        /** Bearer tokens from a token service. */
        mode: "token";
        /** The token endpoint clients are sent to. */
        realm: string;
        /** The audience tokens must name. */
        service: string;
        /** The issuer tokens must name. */
        issuer: string;
        /** Whether the token service is another server's (not ours). */
        external: boolean;
        /** The PEM bundle tokens are verified with, when configured. */
        rootCertBundle?: string;
        /** The JWKS file tokens are verified with, when configured. */
        jwks?: string;
      };
  /** Our own token service, when served. */
  tokenService?: {
    /** The path it answers on. */
    path: string;
    /** The key id in the tokens' header. */
    kid: string;
    /** The private key file. */
    keyFile: string;
    /** Whether this start generated the key. */
    keyCreated: boolean;
    /** The certificate file, when one was configured. */
    certificateFile?: string;
  };
  /** The management API; `audience` is set when it also accepts Bearer tokens from our token service. */
  users?: {
    /** The path of its routes (`<prefix>/users`). */
    path: string;
    /** The audience of the Bearer tokens it accepts. */
    audience?: string;
  };
  /** Set when this start created the first administrator; `password` only when it was generated. */
  admin?: {
    /** The administrator's name. */
    username: string;
    /** The generated password, to print once. */
    password?: string;
  };
  /** Where the upload `_state` secret comes from. */
  uploadSecret: {
    /**
     * From the configuration (`http.secret`), a file in the key directory, or
     * generated and kept in memory (the key directory of a config file could
     * not be written: see `AllInOneConfig.keyDirectoryOptional`).
     */
    source: "config" | "file" | "memory";
    /** The file, when `source` is `file`. */
    file?: string;
    /** Whether this start generated it. */
    created: boolean;
    /** Why it is in memory (the error of the key directory), when `source` is `memory`. */
    reason?: string;
  };
  /** The web page (`registrykit.ui`), when mounted. */
  ui?: {
    /** Where it answers, e.g. `/ui/`. */
    path: string;
  };
  /** The pull-through upstreams (`proxy`, `registrykit.proxy`), when configured; no credentials. */
  proxy?: Array<{
    /** The local prefix the upstream serves (empty: every repository). */
    prefix: string;
    /** The upstream's URL. */
    url: string;
    /** Seconds a tag is served before it is confirmed upstream. */
    ttlSeconds: number;
    /** Whether pushes under the prefix are taken. */
    allowPush: boolean;
    /** Whether credentials are configured (they are never shown). */
    authenticated: boolean;
  }>;
  /** Set when the server is in read-only mode (`storage.maintenance.readonly.enabled`): every write gets 405. */
  readOnly?: true;
  /** The policies in force, when any: write policies (`registrykit.policy`), retention, the scheduled GC. */
  policies?: {
    /** `registrykit.policy.immutabletags`. */
    immutableTags?: ImmutableTagPatterns;
    /** `registrykit.policy.quotas`: repository glob → bytes. */
    quotas?: QuotaLimits;
    /** How many `registrykit.retention` rules each garbage collection applies. */
    retentionRules?: number;
    /** `registrykit.gc`: the scheduled garbage collection. */
    gc?: { intervalMs: number; removeUntagged: boolean; dryRun: boolean };
  };
  /** The periodic blob verification (`registrykit.verify`), when on. */
  verify?: {
    /** Milliseconds between runs. */
    intervalMs: number;
    /** Whether mismatching blobs are quarantined. */
    quarantine: boolean;
  };
}

/** A composed server: one fetch handler for every path. */
export interface AllInOne {
  /** Answers every path: the registry, the token service, the management API, 404 elsewhere. */
  handler: (request: Request) => Promise<Response>;
  /**
   * The debug listener's handler (`http.debug.addr`): `/debug/health`,
   * `/debug/vars` (command line, memory, uptime as JSON), and the
   * Prometheus metrics at `http.debug.prometheus.path` when enabled; 404
   * elsewhere. Absent without `http.debug.addr`. Serve it on its own port,
   * never on the main one.
   */
  debugHandler?: (request: Request) => Promise<Response>;
  /** Stop the health checks and the periodic verify (waiting for a run in progress to stop) and release storage resources. */
  close(): Promise<void>;
  /** What runs, for a banner or a log line. */
  info: AllInOneInfo;
}
