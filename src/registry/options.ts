/**
 * The options of {@link createRegistry} and how they become the registry's
 * settings (defaults, validation).
 *
 * @module
 */
import type { Authorizer } from "../auth/access.js";
import type { LogHook } from "../http/log.js";
import { DEFAULT_REDIRECT_SECONDS, type StorageDriver } from "../storage/driver.js";
import type { Metrics } from "../util/metrics.js";
import type { EventHook } from "../events/hook.js";
import type { HandlerSettings } from "./context.js";
import type { StoreWrapper } from "./stores/types.js";
import type { PullThroughOptions } from "./pull-through/options.js";
import type { WritePolicy } from "./policy/write-policy.js";
import type { ManifestValidation } from "./manifest-validation.js";

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
  /** Manifest media types accepted on PUT. Default {@link registry!DEFAULT_MANIFEST_MEDIA_TYPES}. */
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
   * a sink (`record`) gets the events in order through a bounded queue, off
   * the request path. Only `createNotifier`'s outbox is awaited before the
   * response (it makes push, mount and delete durable). Without `log`,
   * failures of listeners and sinks go to `console.error`.
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
  /**
   * Features of your own around the registry's stores (docs/stores.md): each
   * wrapper gets the stores with every built-in feature below it and returns
   * the stores the handlers call. A list is applied with its first wrapper
   * outermost. A `RegistryError` a wrapper throws is answered as itself (see
   * `denied`); any other throw is a 500 with an `error` log event.
   */
  wrapStores?: StoreWrapper | readonly StoreWrapper[];
}

export function redirectSetting(option: RegistryOptions["redirect"]): HandlerSettings["redirect"] {
  if (option === false) return undefined;
  const seconds = (typeof option === "object" ? option.expiresInSeconds : undefined) ?? DEFAULT_REDIRECT_SECONDS;
  if (!Number.isSafeInteger(seconds) || seconds < 1) throw new TypeError("redirect.expiresInSeconds must be a positive whole number");
  return { expiresInSeconds: seconds };
}
