/**
 * The composition of the all-in-one server: which handler owns which path,
 * built from an {@link AllInOneConfig}. It opens storage and reads or creates
 * keys, but never listens on a port, so it is unit-tested by calling the
 * handler directly.
 *
 * | Path | Handler |
 * |---|---|
 * | `/v2`, `/v2/…` | the registry |
 * | `registrykit.tokenservice.path` (default `/service/token`) | the token service, when enabled |
 * | `<registrykit.users.prefix>/users…` (default `/api/users`) | the management API, when enabled |
 * | anything else | 404 |
 *
 * The management API accepts `Authorization: Basic` (checked against the
 * user store) and, when registry-kit serves its own token service, a Bearer
 * token from that service whose audience is {@link managementAudience}
 * (`<auth.token.service>-management`, e.g. `registry-kit-management`).
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import {
  createTokenAuthorizer, createTokenService, createTokenVerifier, defaultPolicy, pemKeys, type KeyProvider,
} from "../auth/index.js";
import { pemKeysFromFiles } from "../auth/keys.node.js";
import type { Authorizer } from "../auth/access.js";
import { silent, type LogHook } from "../http/log.js";
import { readsRequestBasics } from "../http/request-basics.js";
import { createRegistry, removeAbandonedUploads } from "../registry/index.js";
import type { StorageDriver } from "../storage/driver.js";
import { fsStorage } from "../storage/fs/index.js";
import { memoryStorage } from "../storage/memory/index.js";
import { s3Storage } from "../storage/s3/index.js";
import {
  anyAuthenticator, basicAuthenticator, bearerAuthenticator, bootstrapAdmin, createUserService, storageUserStore,
  storeCredentialCheck, type Authenticator,
} from "../users/index.js";
import type { AllInOneConfig } from "./config.js";
import { generatePassword, KEY_FILES, loadOrCreateSigningKey, loadOrCreateUploadSecret } from "./key-material.js";
import { startPeriodicVerify } from "./verify-schedule.js";
import { startPeriodic } from "./periodic.js";

/** Extra inputs of {@link createAllInOne}. */
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
}

/** What the server runs, for the banner and for tests. */
export interface AllInOneInfo {
  /** Where the registry answers. */
  registryPath: "/v2/";
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
    /** From the configuration (`http.secret`) or a file in the key directory. */
    source: "config" | "file";
    /** The file, when `source` is `file`. */
    file?: string;
    /** Whether this start generated it. */
    created: boolean;
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
  /** Stop the periodic verify (waiting for a run in progress to stop) and release storage resources. */
  close(): Promise<void>;
  /** What runs, for a banner or a log line. */
  info: AllInOneInfo;
}

/**
 * The audience (`service` of the token request, `aud` of the token) of
 * tokens for the management API: the registry's service name + `-management`.
 * Our token service issues for it, the registry refuses such tokens (wrong
 * `aud`) and the management API refuses registry tokens.
 */
export function managementAudience(registryService: string): string {
  return `${registryService}-management`;
}

const NOT_FOUND = JSON.stringify({ errors: [{ code: "NOT_FOUND", message: "no such route", detail: null }] });

/**
 * Build the all-in-one handler from `config`: open the storage, read or create
 * the keys and the upload secret in the key directory, create the first
 * administrator when the user store is empty, and start the periodic jobs
 * (upload purge, verify) the configuration asks for. It does not listen:
 * serve `handler` with `registry-kit/node` or any framework, and call `close()`
 * at shutdown.
 */
export async function createAllInOne(config: AllInOneConfig, options: AllInOneOptions = {}): Promise<AllInOne> {
  const log = options.log ?? silent;
  const storage = options.storage ?? openStorage(config);

  const uploadSecret = config.http.secret !== undefined
    ? { value: config.http.secret, created: false, file: undefined }
    : await loadOrCreateUploadSecret(config.keyDirectory);

  const users = config.users ? storageUserStore(storage) : undefined;
  let admin: AllInOneInfo["admin"];
  if (users && config.users) {
    const password = config.users.adminPassword ?? generatePassword();
    const created = await bootstrapAdmin(users, { username: config.users.adminUsername, password });
    if (created) admin = { username: created.username, ...(config.users.adminPassword ? {} : { password }) };
  }

  let tokenKeys: KeyProvider | undefined;
  let tokenInfo: AllInOneInfo["tokenService"];
  if (config.tokenService) {
    const own = config.tokenService;
    if (own.key && own.certificate) {
      tokenKeys = await pemKeysFromFiles({ privateKey: own.key, certificate: own.certificate });
      tokenInfo = { path: own.path, kid: "", keyFile: own.key, keyCreated: false, certificateFile: own.certificate };
    } else {
      const pem = await loadOrCreateSigningKey(config.keyDirectory);
      tokenKeys = pemKeys(pem.value);
      tokenInfo = {
        path: own.path, kid: "", keyFile: pem.file, keyCreated: pem.created,
        certificateFile: pem.file.replace(KEY_FILES.privateKey, KEY_FILES.certificate),
      };
    }
    const signing = await tokenKeys.signingKey();
    tokenInfo.kid = signing.kid ?? "";
  }

  let authorize: Authorizer | undefined;
  let authInfo: AllInOneInfo["auth"] = { mode: "none" };
  if (config.auth) {
    const realm = config.auth.realm ?? `${config.http.publicUrl ?? options.origin ?? localOrigin(config)}${config.tokenService?.path ?? "/"}`;
    const bundle = config.auth.rootCertBundle;
    const trust = bundle !== undefined ? { rootCertBundle: await readFile(bundle, "utf8") } : { keys: tokenKeys as KeyProvider };
    authorize = createTokenAuthorizer({ realm, service: config.auth.service, issuer: config.auth.issuer, ...trust, log });
    authInfo = {
      mode: "token", realm, service: config.auth.service, issuer: config.auth.issuer, external: !config.tokenService,
      ...(bundle !== undefined ? { rootCertBundle: bundle } : {}),
    };
  }

  const registry = createRegistry({
    storage,
    ...(authorize ? { authorize } : {}),
    uploadSecret: uploadSecret.value,
    deleteEnabled: config.deleteEnabled,
    limits: { listEntries: config.catalogMaxEntries, uploadIdleSeconds: config.uploads.idleSeconds, ...config.uploads.limits },
    log,
  });

  const routes: { matches: (path: string) => boolean; handler: (request: Request) => Promise<Response> }[] = [
    { matches: (p) => p === "/v2" || p.startsWith("/v2/"), handler: registry },
  ];
  // Bearer tokens for the management API: only from our own token service.
  const bearerAudience = config.tokenService && tokenKeys && config.auth && users ? managementAudience(config.auth.service) : undefined;
  if (config.tokenService && tokenKeys && config.auth) {
    const path = config.tokenService.path;
    const tokenService = createTokenService({
      issuer: config.auth.issuer,
      // The first is the default for requests without `service`.
      service: bearerAudience ? [config.auth.service, bearerAudience] : config.auth.service,
      keys: tokenKeys,
      ...(users ? { checkCredentials: storeCredentialCheck(users) } : {}),
      policy: defaultPolicy({ publicRepositories: config.tokenService.publicRepositories }),
      expiresIn: config.tokenService.expiration,
      log,
    });
    routes.push({ matches: (p) => p === path || p === `${path}/`, handler: tokenService });
  }
  if (users && config.users) {
    const base = `${config.users.prefix}/users`;
    let authenticate: Authenticator | undefined;
    if (bearerAudience && tokenKeys && config.auth) {
      const verifier = createTokenVerifier({ issuer: config.auth.issuer, audience: bearerAudience, keys: tokenKeys });
      authenticate = anyAuthenticator(
        basicAuthenticator(storeCredentialCheck(users)),
        bearerAuthenticator(async (token) => (await verifier.verify(token)).claims, users),
      );
    }
    const service = createUserService({
      store: users, prefix: config.users.prefix, selfRegistration: config.users.selfRegistration, authMode: "db", log,
      ...(authenticate ? { authenticate } : {}),
    });
    routes.push({ matches: (p) => p === base || p.startsWith(`${base}/`), handler: service });
  }

  const extraHeaders = config.http.headers;
  const handler = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    const route = routes.find((r) => r.matches(path));
    const response = route
      ? await route.handler(request)
      : new Response(NOT_FOUND, { status: 404, headers: { "content-type": "application/json; charset=utf-8" } });
    return extraHeaders.length > 0 ? withHeaders(response, extraHeaders) : response;
  };
  // Every route is registry-kit's own and reads only the basics of a request.
  readsRequestBasics(handler);

  // Started last, so that a failed start-up leaves no timer behind.
  const periodicVerify = config.verify ? startPeriodicVerify(storage, config.verify, log) : undefined;
  const purge = config.uploads.purge;
  // At start too: it removes what a crash left behind as soon as it is old enough.
  const uploadPurge = purge
    ? startPeriodic("upload purge", purge.intervalMs, async (signal) => {
        const report = await removeAbandonedUploads(storage, { idleSeconds: config.uploads.idleSeconds, dryRun: purge.dryRun, signal, log });
        if (report.removed.length > 0 || report.staleIndexEntries > 0) {
          log({ level: "info", msg: purge.dryRun ? "upload purge (dry run)" : "upload purge", removed: report.removed.length, bytes: report.bytes, staleIndexEntries: report.staleIndexEntries });
        }
      }, log, true)
    : undefined;
  return {
    handler,
    close: async () => {
      await periodicVerify?.stop();
      await uploadPurge?.stop();
      await storage.close?.();
    },
    info: {
      registryPath: "/v2/",
      storage: options.storage ? storage.name : describeStorage(config.storage),
      keyDirectory: config.keyDirectory,
      auth: authInfo,
      ...(tokenInfo ? { tokenService: tokenInfo } : {}),
      ...(config.users ? { users: { path: `${config.users.prefix}/users`, ...(bearerAudience ? { audience: bearerAudience } : {}) } } : {}),
      ...(admin ? { admin } : {}),
      uploadSecret: uploadSecret.file !== undefined
        ? { source: "file", file: uploadSecret.file, created: uploadSecret.created }
        : { source: "config", created: false },
      ...(config.verify ? { verify: { intervalMs: config.verify.intervalMs, quarantine: config.verify.quarantine } } : {}),
    },
  };
}

/** The storage driver a configuration names (shared by `serve` and `gc`). */
export function openStorage(config: Pick<AllInOneConfig, "storage">): StorageDriver {
  const storage = config.storage;
  if (storage.driver === "filesystem") return fsStorage({ root: storage.rootDirectory });
  if (storage.driver === "inmemory") return memoryStorage();
  return s3Storage({
    bucket: storage.bucket,
    region: storage.region,
    ...(storage.endpoint !== undefined ? { endpoint: storage.endpoint } : {}),
    ...(storage.forcePathStyle !== undefined ? { forcePathStyle: storage.forcePathStyle } : {}),
    accessKeyId: storage.accessKeyId,
    secretAccessKey: storage.secretAccessKey,
    ...(storage.sessionToken !== undefined ? { sessionToken: storage.sessionToken } : {}),
    ...(storage.rootDirectory !== undefined ? { rootDirectory: storage.rootDirectory } : {}),
    ...(storage.partSize !== undefined ? { partSize: storage.partSize } : {}),
    allowHttp: storage.allowHttp,
  });
}

/** The storage line of the banner (never credentials). */
export function describeStorage(storage: AllInOneConfig["storage"]): string {
  if (storage.driver === "filesystem") return `filesystem ${storage.rootDirectory}`;
  if (storage.driver === "inmemory") return "memory";
  const endpoint = storage.endpoint ?? `https://s3.${storage.region}.amazonaws.com`;
  return `s3 bucket ${storage.bucket} at ${endpoint}${storage.rootDirectory ? `, prefix ${storage.rootDirectory}/` : ""}`;
}

function localOrigin(config: AllInOneConfig): string {
  const host = config.http.host === "0.0.0.0" ? "127.0.0.1" : config.http.host === "::" ? "[::1]" : config.http.host;
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${config.http.port}`;
}

/** `http.headers` are added to every response, unless the handler set the header itself. */
function withHeaders(response: Response, extra: readonly [string, string][]): Response {
  const headers = new Headers(response.headers);
  const own = new Set([...response.headers.keys()]);
  for (const [name, value] of extra) if (!own.has(name.toLowerCase())) headers.append(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
