/**
 * The registry: the OCI Distribution API under `/v2/` as one fetch handler.
 *
 * ```ts
 * import { createRegistry } from "registry-kit/registry";
 * import { memoryStorage } from "registry-kit/storage/memory";
 *
 * const registry = createRegistry({ storage: memoryStorage(), uploadSecret: process.env.UPLOAD_SECRET });
 * const response = await registry(new Request("http://localhost:5000/v2/"));
 * ```
 *
 * @module
 */
import { allowAll, type Authorizer } from "../auth/access.js";
import { silent, type LogHook } from "../http/log.js";
import { onlyReadsRequestBasics, readsRequestBasics } from "../http/request-basics.js";
import { DEFAULT_REDIRECT_SECONDS, StorageError, checked, type StorageDriver } from "../storage/driver.js";
import { neededAccess, type MountRequest } from "./access.js";
import { deleteBlob, getBlob, headBlob } from "./blobs.js";
import { listCatalog } from "./catalog.js";
import type { RegistryContext } from "./context.js";
import { parseDigest } from "../oci/digest.js";
import { RegistryError, errorResponse, storageFull } from "../oci/errors.js";
import { ManifestCache } from "./manifest-cache.js";
import { deleteManifest, getManifest, headManifest, putManifest } from "./manifests.js";
import { assertName } from "./names.js";
import { listReferrers } from "./referrers.js";
import { jsonBody } from "./responses.js";
import { normalizeBasePath, parseRoute, underBase, type Route } from "./router.js";
import { listTags } from "./tags.js";
import { uploadStateCodec } from "./upload-state.js";
import { cancelUpload, patchUpload, putUpload, startUpload, uploadStatus } from "./uploads.js";
import { DEFAULT_MANIFEST_MEDIA_TYPES } from "../oci/wire.js";
import { principalOf } from "../auth/principal.js";
import { instrumentHandler } from "../http/metrics.js";
import type { Metrics } from "../util/metrics.js";
import { registryRouteLabel } from "./metrics.js";
import type { UploadLimits } from "./upload-limits.js";
import { resolvePullThrough, type PullThroughOptions } from "./pull-through/options.js";
import { pullBlob } from "./pull-through/blobs.js";
import { pullManifest } from "./pull-through/manifests.js";
import { eventEmitter, type EventHook } from "../events/hook.js";
import { allPolicies, type WritePolicy } from "./policy/write-policy.js";
import { resolveValidation, type ManifestValidation } from "./manifest-validation.js";

/** Size and count limits of the registry. */
export interface RegistryLimits {
  /** Largest manifest accepted on PUT, in bytes; larger gets 413. Default 4 MiB. */
  manifestBytes?: number;
  /** Largest page of tags/list, _catalog and referrers; a larger `n` gets 400. Default 1000. */
  listEntries?: number;
  /** Uploads started longer ago than this are unknown (404) and removed on touch. Default 24 hours. */
  uploadMaxAgeSeconds?: number;
  /**
   * Uploads nobody wrote a byte to for this long are abandoned: unknown (404)
   * and removed on touch, when a limit below is reached, and by
   * `removeAbandonedUploads`. Default 3600 (one hour).
   */
  uploadIdleSeconds?: number;
  /** Open upload sessions one identified caller may hold (429 `TOOMANYREQUESTS` past it). Default 128; `Infinity` for no limit. */
  uploadsPerCaller?: number;
  /** Open upload sessions one repository may hold, whoever started them. Default 256; `Infinity` for no limit. */
  uploadsPerRepository?: number;
  /** Bytes the open uploads of one identified caller may hold together (403 `DENIED` past it). Default 64 GiB; `Infinity` for no limit. */
  uploadBytesPerCaller?: number;
  /** Bytes the open uploads of one repository may hold together. Default `Infinity` (no limit). */
  uploadBytesPerRepository?: number;
}

/** Options of {@link createRegistry}. */
export interface RegistryOptions {
  /** Where blobs, manifests, tags and uploads are kept. Always used through `checked()`. */
  storage: StorageDriver;
  /**
   * Called before every route with the access it needs (see the README's table;
   * `[]` for `GET /v2/`). Resolve to `undefined` to allow, or to the Response to
   * send instead, which is returned unchanged. Default: allow everything.
   */
  authorize?: Authorizer;
  /**
   * HMAC key signing the upload `_state`. Give every process behind one storage
   * the same secret so any of them can continue an upload. When absent, a random
   * per-process key is used and a `warn` event is logged.
   */
  uploadSecret?: string | Uint8Array;
  /** Allow DELETE of manifests, tags and blobs. Default false: DELETE gets 405 UNSUPPORTED. */
  deleteEnabled?: boolean;
  /**
   * Read-only maintenance mode (Distribution's `storage.maintenance.readonly`),
   * e.g. while garbage collection runs: every write (upload POST/PATCH/PUT/DELETE,
   * mount, manifest PUT, DELETE) is answered, after authorization, with 405
   * `UNSUPPORTED` and an `Allow` header of the read methods; reads keep working.
   * Default false.
   */
  readOnly?: boolean;
  /** Size and count limits. */
  limits?: RegistryLimits;
  /** Manifest media types accepted on PUT. Default {@link DEFAULT_MANIFEST_MEDIA_TYPES}. */
  manifestMediaTypes?: readonly string[];
  /** Receives log events (unexpected failures, configuration warnings). */
  log?: LogHook;
  /**
   * Who makes a request, for the per-caller upload limits (`undefined` for an
   * anonymous caller, who is limited per repository only). Default: the `sub`
   * of the token that `createTokenAuthorizer` verified for the request.
   */
  callerOf?: (request: Request) => string | undefined;
  /**
   * Count every request into these metrics under Distribution's
   * `registry_http_*` names, labelled by route (`handler`: `base`, `catalog`,
   * `tags`, `manifest`, `blob`, `blob_upload`, `blob_upload_chunk`,
   * `referrers`), method and status; see docs/metrics.md. Default: none.
   */
  metrics?: Metrics;
  /**
   * Blob GETs answer `307 Temporary Redirect` to a time-limited URL of the
   * blob when the storage driver offers one ({@link StorageDriver.redirectURL},
   * e.g. an S3 presigned URL), so the bytes flow from the store to the client.
   * HEAD is always answered here. Default `true`, as Distribution's
   * `storage.redirect` (only drivers with the capability redirect); `false`
   * serves every blob through the registry. `expiresInSeconds` sets the URL's
   * lifetime (default 1200).
   */
  redirect?: boolean | {
    /** How long a handed-out URL stays valid. */
    expiresInSeconds?: number;
  };
  /**
   * Serve repositories from upstream registries and keep a copy (a pull-through
   * cache): manifests and blobs missing here are fetched on a pull, by prefix of
   * the repository name; other repositories stay local (docs/proxy.md).
   */
  pullThrough?: PullThroughOptions;
  /**
   * Receives an event per push, pull (manifest and blob GET), mount, delete,
   * upload started or cancelled and repository created (see docs/events.md).
   * A function is called after the request and can neither fail nor slow it;
   * a sink (`record`, e.g. `createNotifier`) is awaited before the response.
   */
  onEvent?: EventHook;
  /**
   * Pre-commit hooks of writes (docs/policies.md): each is asked before a
   * manifest or tag is stored, a blob upload or mount completes, or a tag or
   * manifest is deleted, and may refuse with a 403 `DENIED` whose message
   * clients print. Built-ins: `immutableTags`, `quota`. Default: none.
   */
  policies?: readonly WritePolicy[];
  /**
   * The path the API is mounted under (Distribution's `http.prefix`), e.g.
   * `/registry`: the registry then answers `/registry/v2/…`, every `Location`
   * and `Link` it writes and the URL of each event start with it, and a path
   * outside it gets 404. Trailing slashes are dropped; `""` and `"/"` are the
   * same as none. A `TypeError` for a value that does not start with `/` or holds a
   * character a URL would encode. Default: none (`/v2/…`).
   */
  basePath?: string;
  /**
   * What a pushed manifest's references must satisfy (Distribution's
   * `validation.manifests`): the `urls` of layers (`allow`/`deny`
   * expressions) and which child manifests of an index must be present
   * (`indexes`). Default: every referenced blob without `urls` and every child
   * manifest must be in the repository; descriptors with `urls` are not
   * looked up. See {@link ManifestValidation}.
   */
  manifestValidation?: ManifestValidation;
}

function redirectSetting(option: RegistryOptions["redirect"]): RegistryContext["redirect"] {
  if (option === false) return undefined;
  const seconds = (typeof option === "object" ? option.expiresInSeconds : undefined) ?? DEFAULT_REDIRECT_SECONDS;
  if (!Number.isSafeInteger(seconds) || seconds < 1) throw new TypeError("redirect.expiresInSeconds must be a positive whole number");
  return { expiresInSeconds: seconds };
}

/** A fetch handler. */
export type RegistryHandler = (request: Request) => Promise<Response>;

const METHODS: Record<Route["kind"], readonly string[]> = {
  base: ["GET", "HEAD"],
  catalog: ["GET", "HEAD"],
  tags: ["GET", "HEAD"],
  referrers: ["GET", "HEAD"],
  manifest: ["GET", "HEAD", "PUT", "DELETE"],
  blob: ["GET", "HEAD", "DELETE"],
  uploads: ["POST"],
  upload: ["GET", "PATCH", "PUT", "DELETE"],
};

const READS: readonly string[] = ["GET", "HEAD"];

/**
 * Create the `/v2/` handler. Every response, errors included, carries
 * `Container-Distribution-Api-Version` and `Docker-Distribution-Api-Version`;
 * client faults get a 4xx with the OCI error body, unexpected failures a 500
 * with a generic body and an `error` log event, and a full storage (a driver's
 * `no_space`) a 507 with code `UNKNOWN` and an `error` log event. Paths outside
 * `/v2/` get 404.
 */
export function createRegistry(options: RegistryOptions): RegistryHandler {
  const log = options.log ?? silent;
  let secret = options.uploadSecret;
  if (secret !== undefined && secret.length === 0) throw new TypeError("uploadSecret must not be empty");
  if (secret === undefined) {
    secret = crypto.getRandomValues(new Uint8Array(32));
    log({ level: "warn", msg: "no uploadSecret: uploads can only be continued by this process" });
  }
  const basePath = normalizeBasePath(options.basePath);
  const ctx: RegistryContext = {
    storage: checked(options.storage),
    v2: `${basePath}/v2`,
    states: uploadStateCodec(secret),
    deleteEnabled: options.deleteEnabled ?? false,
    readOnly: options.readOnly ?? false,
    manifestBytes: options.limits?.manifestBytes ?? 4 * 1024 * 1024,
    listEntries: options.limits?.listEntries ?? 1000,
    uploadMaxAgeMs: (options.limits?.uploadMaxAgeSeconds ?? 24 * 3600) * 1000,
    uploadLimits: uploadLimits(options.limits),
    callerOf: options.callerOf ?? ((request) => principalOf(request)?.subject || undefined),
    manifestMediaTypes: new Set(options.manifestMediaTypes ?? DEFAULT_MANIFEST_MEDIA_TYPES),
    log,
    emit: eventEmitter({ onEvent: options.onEvent, log }),
    liveHashers: new Map(),
    manifests: new ManifestCache(),
    uploadBytes: options.metrics
      ?.counter("registrykit_blob_upload_bytes_total", "Bytes of blob upload bodies received and stored (chunked bodies included)")
      .labels(),
    redirect: redirectSetting(options.redirect),
    validation: resolveValidation(options.manifestValidation),
  };
  if (options.pullThrough) ctx.pullThrough = resolvePullThrough(options.pullThrough);
  if (options.policies && options.policies.length > 0) ctx.policy = allPolicies(options.policies);
  const authorize = options.authorize ?? allowAll;

  const registry: RegistryHandler = async (request) => {
    try {
      return await handle(ctx, authorize, request);
    } catch (error) {
      if (error instanceof RegistryError) return withoutBodyForHead(request, error.toResponse(request));
      let path = "";
      try {
        path = new URL(request.url).pathname;
      } catch {
        // keep the log event even for an unparsable URL
      }
      if (error instanceof StorageError && error.code === "no_space") {
        // Not the client's fault and not a bug: an operator must free space. The driver's
        // error (with its cause) goes to the log only; the client gets a fixed 507.
        log({ level: "error", msg: "registry storage is full", method: request.method, path, error });
        return withoutBodyForHead(request, storageFull().toResponse(request));
      }
      log({ level: "error", msg: "registry request failed", method: request.method, path, error });
      return withoutBodyForHead(request, errorResponse("UNKNOWN", "internal server error", { status: 500, request }));
    }
  };
  // The registry reads only the basics of a request; so does its authorizer when it is registry-kit's own.
  const marked = onlyReadsRequestBasics(authorize) ? readsRequestBasics(registry) : registry;
  if (!options.metrics) return marked;
  return instrumentHandler(marked, options.metrics, basePath === "" ? registryRouteLabel : (p) => registryRouteLabel(underBase(p, basePath) ?? ""));
}

async function handle(ctx: RegistryContext, authorize: Authorizer, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const path = underBase(url.pathname, ctx.v2.slice(0, -3));
  const route = path === undefined ? undefined : parseRoute(path);
  if (!route) throw new RegistryError("UNSUPPORTED", "no such route", 404, { path: url.pathname.slice(0, 300) });
  const method = request.method.toUpperCase();
  const allowed = METHODS[route.kind];
  if (!allowed.includes(method)) throw methodNotAllowed(allowed);
  const mount = route.kind === "uploads" ? mountRequest(url) : undefined;

  const denied = await authorize(request, neededAccess(route, method, mount));
  if (denied) return denied;

  const read = READS.includes(method);
  // As Distribution: authorization first, then the write methods are simply not there.
  if (ctx.readOnly && !read) throw methodNotAllowed(allowed.filter((m) => READS.includes(m)), "the registry is in read-only mode");
  if (method === "DELETE" && !ctx.deleteEnabled && (route.kind === "manifest" || route.kind === "blob")) {
    throw methodNotAllowed(allowed.filter((m) => m !== "DELETE"), "deletion is disabled");
  }
  const name = "name" in route ? route.name : undefined;
  const proxied = name === undefined ? undefined : ctx.pullThrough?.lookup(name);
  if (proxied && ctx.pullThrough) {
    // After authorization: a caller who may not pull makes the registry fetch nothing.
    if (read && route.kind === "manifest") return pullManifest(ctx, ctx.pullThrough, proxied, request, route.name, route.reference);
    if (read && route.kind === "blob") return pullBlob(ctx, ctx.pullThrough, proxied, request, route.name, route.digest);
    if (!read && !proxied.allowPush) {
      const message = `repository ${name} is a pull-through cache of an upstream registry; pushes and deletes are disabled`;
      throw methodNotAllowed(allowed.filter((m) => READS.includes(m)), message, { prefix: proxied.prefix });
    }
  }
  if (method === "HEAD" && route.kind !== "manifest" && route.kind !== "blob") {
    return withoutBodyForHead(request, await dispatch(ctx, request, url, route, "GET"));
  }
  return dispatch(ctx, request, url, route, method);
}

function dispatch(ctx: RegistryContext, request: Request, url: URL, route: Route, method: string): Promise<Response> {
  switch (route.kind) {
    case "base":
      return Promise.resolve(jsonBody(request, {}));
    case "catalog":
      return listCatalog(ctx, request, url);
    case "tags":
      return listTags(ctx, request, url, route.name);
    case "referrers":
      return listReferrers(ctx, request, url, route.name, route.digest);
    case "manifest":
      if (method === "GET") return getManifest(ctx, request, route.name, route.reference);
      if (method === "HEAD") return headManifest(ctx, route.name, route.reference);
      if (method === "PUT") return putManifest(ctx, request, url, route.name, route.reference);
      return deleteManifest(ctx, request, route.name, route.reference);
    case "blob":
      if (method === "GET") return getBlob(ctx, request, route.name, route.digest);
      if (method === "HEAD") return headBlob(ctx, route.name, route.digest);
      return deleteBlob(ctx, request, route.name, route.digest);
    case "uploads":
      return startUpload(ctx, request, url, route.name, mountRequest(url));
    case "upload":
      if (method === "GET") return uploadStatus(ctx, request, url, route.name, route.uuid);
      if (method === "PATCH") return patchUpload(ctx, request, url, route.name, route.uuid);
      if (method === "PUT") return putUpload(ctx, request, url, route.name, route.uuid);
      return cancelUpload(ctx, request, url, route.name, route.uuid);
  }
}

/**
 * A HEAD response carries no content (RFC 9110 §9.3.2), errors included; its
 * headers, `Content-Length` too, stay those the GET would get. Adapters drop
 * the body anyway, but a handler called directly must not hand one out.
 */
async function withoutBodyForHead(request: Request, response: Response): Promise<Response> {
  if (request.method.toUpperCase() !== "HEAD") return response;
  await response.body?.cancel();
  return new Response(null, { status: response.status, headers: response.headers });
}

function methodNotAllowed(allow: readonly string[], message = "method not allowed", detail: unknown = null): RegistryError {
  return new RegistryError("UNSUPPORTED", message, 405, detail, { Allow: allow.join(", ") });
}

/** `?mount=<digest>&from=<repo>`, validated; `undefined` when not both given (a normal upload). */
function mountRequest(url: URL): MountRequest | undefined {
  const mount = url.searchParams.get("mount");
  const from = url.searchParams.get("from");
  if (mount === null || from === null) return undefined;
  const digest = parseDigest(mount);
  assertName(from);
  return { digest, from };
}

export { DEFAULT_MANIFEST_MEDIA_TYPES, MEDIA_TYPES, HEADERS, API_VERSION } from "../oci/wire.js";
export { RegistryError, errorResponse } from "../oci/errors.js";
export type { ErrorCode } from "../oci/errors.js";
export { collectGarbage } from "./gc/index.js";
export { immutableTags } from "./policy/immutable-tags.js";
export type { ImmutableTagPatterns, ImmutableTags } from "./policy/immutable-tags.js";
export { quota } from "./policy/quota.js";
export type { Quota, QuotaLimits, QuotaOptions, QuotaUsage } from "./policy/quota.js";
export type { BlobCommit, ManifestDelete, ManifestPush, PendingWrite, PolicyRefusal, ReferencedBlob, RepositoryDelete, TagDelete, WritePolicy } from "./policy/write-policy.js";
export { deleteRepository } from "./repository-delete.js";
export type { IndexPlatform, LayerUrlRules, ManifestValidation } from "./manifest-validation.js";
export type { DeleteRepositoryOptions, DeleteRepositoryReport } from "./repository-delete.js";
export type { GcOptions, GcReport, RetentionRule } from "./gc/index.js";
export { verifyBlobs } from "./verify.js";
export { tagDetails } from "./tag-details.js";
export type { TagDetail, TagDetailsOptions, TagDetailsPage } from "./tag-details.js";
export { removeAbandonedUploads } from "./upload-limits.js";
export type { RemoveAbandonedUploadsOptions, RemoveAbandonedUploadsReport } from "./upload-limits.js";
export type { VerifyError, VerifyMismatch, VerifyOptions, VerifyProgress, VerifyReport } from "./verify.js";
export type { QuarantineInfo } from "./layout.js";
export type { PullThroughOptions, PullThroughUpstream } from "./pull-through/options.js";
export { expireCachedTags } from "./pull-through/expire.js";
export type { ExpireCachedTagsOptions, ExpireCachedTagsReport } from "./pull-through/expire.js";
export type { Upstream, UpstreamBlob, UpstreamManifest, UpstreamManifestHead } from "./pull-through/upstream.js";
export type { Access, Authorizer } from "../auth/access.js";
export { createMetrics, PROMETHEUS_CONTENT_TYPE } from "../util/metrics.js";
export type { CounterSeries, Family, GaugeSeries, HistogramSeries, Metrics } from "../util/metrics.js";
export { instrumentHandler, metricsHandler } from "../http/metrics.js";
export { createHealthChecks } from "../util/health.js";
export type { HealthCheckOptions, HealthChecks } from "../util/health.js";
export { healthGate, healthStatusHandler, storageHealthCheck } from "./health.js";
export type { EventHook, EventListener, EventSink, RegistryEvent } from "../events/index.js";

function uploadLimits(limits: RegistryLimits | undefined): UploadLimits {
  const count = (value: number | undefined, fallback: number, what: string): number => {
    const n = value ?? fallback;
    if (!(n === Infinity || (Number.isSafeInteger(n) && n >= 0))) throw new TypeError(`limits.${what} must be a whole number or Infinity`);
    return n;
  };
  return {
    sessionsPerCaller: count(limits?.uploadsPerCaller, 128, "uploadsPerCaller"),
    sessionsPerRepository: count(limits?.uploadsPerRepository, 256, "uploadsPerRepository"),
    bytesPerCaller: count(limits?.uploadBytesPerCaller, 64 * 1024 ** 3, "uploadBytesPerCaller"),
    bytesPerRepository: count(limits?.uploadBytesPerRepository, Infinity, "uploadBytesPerRepository"),
    idleMs: count(limits?.uploadIdleSeconds, 3600, "uploadIdleSeconds") * 1000,
  };
}
