/**
 * The stores of a registry: the base stores with every configured feature
 * wrapped around them, in one order (docs/stores.md). As a request sees them,
 * outermost first:
 *
 * 1. the embedder's `wrapStores` (first of a list outermost), seeing every
 *    built-in feature below;
 * 2. metrics (`registrykit_blob_upload_bytes_total`), when `metrics` is given;
 * 3. events, when `onEvent` is given: a write below that succeeded is an
 *    event, a GET of a manifest or blob a pull;
 * 4. write policies, when `policies` are given: asked before each write below;
 * 5. the pull-through cache, when `pullThrough` is given: what it fetches it
 *    stores below, past the policies and without events (as a cache);
 * 6. the manifest cache, always: revalidated by the base stores with one stat;
 * 7. the base stores over the storage driver.
 *
 * A feature that is not configured is not assembled, so it costs nothing.
 *
 * @module
 */
import type { StorageDriver } from "../storage/driver.js";
import type { Emit } from "../events/hook.js";
import { NO_EVENTS } from "../events/hook.js";
import type { Metrics } from "../util/metrics.js";
import { manifestCacheStores } from "./manifest-cache.js";
import type { WritePolicy } from "./policy/write-policy.js";
import type { PullThroughSettings } from "./pull-through/common.js";
import type { PullThrough } from "./pull-through/options.js";
import { pullThroughStores } from "./pull-through/stores.js";
import { baseStores, type BaseStoreOptions } from "./stores/base/index.js";
import type { RegistryStores, StoreWrapper } from "./stores/types.js";
import { eventStores } from "./wrappers/events.js";
import { metricsStores } from "./wrappers/upload-metrics.js";
import { policyStores } from "./wrappers/write-policies.js";

/** What {@link composeStores} assembles. */
export interface StoreFeatures {
  /** The registry's checked driver. */
  storage: StorageDriver;
  base: BaseStoreOptions;
  pullThrough: PullThrough | undefined;
  manifestSettings: PullThroughSettings;
  policies: readonly WritePolicy[];
  emit: Emit;
  v2: string;
  metrics: Metrics | undefined;
  wrapStores: StoreWrapper | readonly StoreWrapper[] | undefined;
}

/** The stores of a registry (see the module comment for the order). */
export function composeStores(features: StoreFeatures): RegistryStores {
  // Innermost first.
  const wrappers: StoreWrapper[] = [manifestCacheStores()];
  if (features.pullThrough) wrappers.push(pullThroughStores(features.pullThrough, features.manifestSettings));
  if (features.policies.length > 0) wrappers.push(policyStores(features.policies, features.storage));
  if (features.emit !== NO_EVENTS) {
    const { manifestBytes, manifestMediaTypes } = features.manifestSettings;
    wrappers.push(eventStores({ emit: features.emit, v2: features.v2, manifestBytes, manifestMediaTypes }));
  }
  if (features.metrics) wrappers.push(metricsStores(features.metrics));
  const own = features.wrapStores;
  const embedder = own === undefined ? [] : typeof own === "function" ? [own] : [...own];
  // The first of the embedder's list is the outermost: applied last.
  wrappers.push(...embedder.reverse());
  let stores = baseStores(features.storage, features.base);
  for (const wrap of wrappers) stores = checkedWrap(wrap, stores);
  return stores;
}

/** Apply `wrap`, refusing an answer that is not a complete set of stores (a wrapper's bug shows at start-up). */
function checkedWrap(wrap: StoreWrapper, below: RegistryStores): RegistryStores {
  const stores = wrap(below);
  for (const part of ["blobs", "manifests", "tags", "uploads", "repositories"] as const) {
    if (typeof stores?.[part] !== "object" || stores[part] === null) throw new TypeError(`a store wrapper returned no ${part} store`);
  }
  return stores;
}
