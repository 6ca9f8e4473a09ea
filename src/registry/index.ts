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
import { silent } from "../http/log.js";
import { onlyReadsRequestBasics, readsRequestBasics } from "../runtime/adapter-capabilities.js";
import { StorageError, checked } from "../storage/driver.js";
import { neededAccess, type MountRequest } from "./access.js";
import { deleteBlob, getBlob, headBlob } from "./blobs.js";
import { listCatalog } from "./catalog.js";
import { callOf, type RegistryContext } from "./context.js";
import { parseDigest } from "../oci/digest.js";
import { RegistryError, errorResponse, storageFull } from "../oci/errors.js";
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
import { registryRouteLabel } from "./metrics.js";
import { resolvePullThrough } from "./pull-through/options.js";
import { eventEmitter } from "../events/hook.js";
import { composeStores } from "./compose.js";
import { resolveValidation } from "./manifest-validation.js";
import { redirectSetting, type RegistryOptions } from "./options.js";

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
  const v2 = `${basePath}/v2`;
  const storage = checked(options.storage);
  const manifestBytes = options.limits?.manifestBytes ?? 4 * 1024 * 1024;
  const manifestMediaTypes = new Set(options.manifestMediaTypes ?? DEFAULT_MANIFEST_MEDIA_TYPES);
  const stores = composeStores({
    storage,
    base: options.limits ? { limits: options.limits } : {},
    pullThrough: options.pullThrough ? resolvePullThrough(options.pullThrough) : undefined,
    manifestSettings: { log, manifestBytes, manifestMediaTypes },
    policies: options.policies ?? [],
    emit: eventEmitter({ onEvent: options.onEvent, log }),
    v2,
    metrics: options.metrics,
    wrapStores: options.wrapStores,
  });
  const ctx: RegistryContext = {
    stores,
    v2,
    states: uploadStateCodec(secret),
    settings: {
      deleteEnabled: options.deleteEnabled ?? false,
      readOnly: options.readOnly ?? false,
      manifestBytes,
      listEntries: options.limits?.listEntries ?? 1000,
      manifestMediaTypes,
      redirect: redirectSetting(options.redirect),
      validation: resolveValidation(options.manifestValidation),
    },
    callerOf: options.callerOf ?? ((request) => principalOf(request)?.subject || undefined),
    log,
  };
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
  if (ctx.settings.readOnly && !read) throw methodNotAllowed(allowed.filter((m) => READS.includes(m)), "the registry is in read-only mode");
  if (method === "DELETE" && !ctx.settings.deleteEnabled && (route.kind === "manifest" || route.kind === "blob")) {
    throw methodNotAllowed(allowed.filter((m) => m !== "DELETE"), "deletion is disabled");
  }
  if (!read && "name" in route) {
    try {
      // After authorization: a store may refuse writes to the repository before any body is read.
      await ctx.stores.repositories.writable(route.name, callOf(ctx, request));
    } catch (error) {
      throw withAllow(error, allowed.filter((m) => READS.includes(m)));
    }
  }
  if (method === "HEAD" && route.kind !== "manifest" && route.kind !== "blob") {
    return withoutBodyForHead(request, await dispatch(ctx, request, url, route, "GET"));
  }
  return dispatch(ctx, request, url, route, method);
}

/** A 405 a store threw, with the route's read methods as `Allow` unless it gave its own. */
function withAllow(error: unknown, reads: readonly string[]): unknown {
  if (!(error instanceof RegistryError) || error.status !== 405 || new Headers(error.headers).has("allow")) return error;
  return new RegistryError(error.code, error.message, 405, error.detail, { ...Object.fromEntries(new Headers(error.headers)), Allow: reads.join(", ") });
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
      if (method === "HEAD") return headManifest(ctx, request, route.name, route.reference);
      if (method === "PUT") return putManifest(ctx, request, url, route.name, route.reference);
      return deleteManifest(ctx, request, route.name, route.reference);
    case "blob":
      if (method === "GET") return getBlob(ctx, request, route.name, route.digest);
      if (method === "HEAD") return headBlob(ctx, request, route.name, route.digest);
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
export { collectGarbage } from "./stores/base/gc/index.js";
export { immutableTags } from "./stores/base/immutable-tags.js";
export type { ImmutableTagPatterns, ImmutableTags } from "./stores/base/immutable-tags.js";
export { quota } from "./stores/base/quota.js";
export type { Quota, QuotaLimits, QuotaOptions, QuotaUsage } from "./stores/base/quota.js";
export type { BlobCommit, BlobDelete, ManifestDelete, ManifestPush, PendingWrite, PolicyRefusal, ReferencedBlob, RepositoryDelete, TagDelete, WritePolicy } from "./policy/write-policy.js";
export { deleteRepository } from "./stores/base/repository-delete.js";
export { baseStores } from "./stores/base/index.js";
export type { BaseStoreOptions } from "./stores/base/index.js";
export { denied } from "./stores/denied.js";
export type {
  BlobContent, BlobInfo, BlobReadOptions, BlobStore, ManifestStore, ManifestWrite, ReferrerDescriptor, RegistryStores, RepositoryStore, ResolvedTag,
  StoreCall, StoreWrapper, StoredManifest, TagStore, UploadAppend, UploadAppended, UploadSession, UploadStore, WithHeaders,
  BlobLinked, ByteRange, CatalogPage, Created, ManifestDeleted, PageAsk, TagPage, UploadCommit, Descriptor, Digest, DigestAlgorithm, ParsedManifest,
} from "./stores/types.js";
export type { IndexPlatform, LayerUrlRules, ManifestValidation } from "./manifest-validation.js";
export type { RegistryLimits, RegistryOptions } from "./options.js";
export type { DeleteRepositoryOptions, DeleteRepositoryReport } from "./stores/types.js";
export type { GcOptions, GcReport, RetentionRule } from "./stores/base/gc/index.js";
export { verifyBlobs } from "./stores/base/verify.js";
export { tagDetails } from "./stores/base/tag-details.js";
export type { TagDetail, TagDetailsOptions, TagDetailsPage } from "./stores/base/tag-details.js";
export { removeAbandonedUploads } from "./stores/base/upload-limits.js";
export type { RemoveAbandonedUploadsOptions, RemoveAbandonedUploadsReport } from "./stores/base/upload-limits.js";
export type { VerifyError, VerifyMismatch, VerifyOptions, VerifyProgress, VerifyReport } from "./stores/base/verify.js";
export type { QuarantineInfo } from "./stores/base/verify.js";
export type { PullThroughOptions, PullThroughUpstream } from "./pull-through/options.js";
export { expireCachedTags } from "./stores/base/expire.js";
export type { ExpireCachedTagsOptions, ExpireCachedTagsReport } from "./stores/base/expire.js";
export type { Upstream, UpstreamBlob, UpstreamManifest, UpstreamManifestHead } from "./pull-through/upstream.js";
export { createMetrics, PROMETHEUS_CONTENT_TYPE } from "../util/metrics.js";
export type { CounterSeries, Family, GaugeSeries, HistogramSeries, Metrics } from "../util/metrics.js";
export { instrumentHandler, metricsHandler } from "../http/metrics.js";
export { createHealthChecks } from "../util/health.js";
export type { HealthCheckOptions, HealthChecks } from "../util/health.js";
export { healthGate, healthStatusHandler } from "./health.js";
export { storageHealthCheck } from "./stores/base/health-check.js";
