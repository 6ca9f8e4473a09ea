/**
 * The store contract (registry-kit/testing) on the base stores and on every
 * built-in wrapper over them, alone and all together as `createRegistry`
 * assembles them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { NO_EVENTS, eventEmitter } from "../../src/events/hook.js";
import { composeStores } from "../../src/registry/compose.js";
import { ManifestCache, manifestCacheStores } from "../../src/registry/manifest-cache.js";
import { resolvePullThrough } from "../../src/registry/pull-through/options.js";
import { pullThroughStores } from "../../src/registry/pull-through/stores.js";
import { baseStores, createMetrics, immutableTags, quota } from "../../src/registry/index.js";
import { eventStores } from "../../src/registry/wrappers/events.js";
import { metricsStores } from "../../src/registry/wrappers/upload-metrics.js";
import { policyStores } from "../../src/registry/wrappers/write-policies.js";
import { silent } from "../../src/http/log.js";
import { fsStorage } from "../../src/storage/fs/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import type { Upstream } from "../../src/registry/index.js";
import { describeStoreContract } from "../../src/testing/index.js";

/** An upstream that has nothing (every object 404). */
const emptyUpstream: Upstream = {
  headManifest: async () => undefined,
  getManifest: async () => undefined,
  headBlob: async () => undefined,
  getBlob: async () => undefined,
};
const settings = { log: silent, manifestBytes: 4 << 20, manifestMediaTypes: new Set(["application/vnd.oci.image.manifest.v1+json"]) };
const listening = () => eventEmitter({ onEvent: () => {}, log: silent });

describeStoreContract("base stores (memory)", () => baseStores(memoryStorage()));

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
describeStoreContract("base stores (fs)", () => {
  const dir = mkdtempSync(join(tmpdir(), "store-contract-"));
  dirs.push(dir);
  return baseStores(fsStorage({ root: dir }));
});

describeStoreContract("manifest cache", () => manifestCacheStores(new ManifestCache())(baseStores(memoryStorage())));
describeStoreContract("events", () => eventStores({ emit: listening(), v2: "/v2", manifestBytes: settings.manifestBytes, manifestMediaTypes: settings.manifestMediaTypes })(baseStores(memoryStorage())));
describeStoreContract("write policies", () => {
  const storage = memoryStorage();
  return policyStores([immutableTags(["release-*"]), quota({ "contract/*": 1 << 20 })], storage)(baseStores(storage));
});
describeStoreContract("pull-through (a proxied prefix allowing pushes)", () =>
  pullThroughStores(resolvePullThrough({ upstreams: [{ prefix: "contract/", upstream: emptyUpstream, allowPush: true }] }), settings)(baseStores(memoryStorage())),
);
describeStoreContract("metrics", () => metricsStores(createMetrics())(baseStores(memoryStorage())));
describeStoreContract("every built-in feature, as createRegistry assembles them", () => {
  const storage = memoryStorage();
  return composeStores({
    storage,
    base: {},
    pullThrough: resolvePullThrough({ upstreams: [{ prefix: "hub/", upstream: emptyUpstream }] }),
    manifestSettings: settings,
    policies: [immutableTags(["release-*"])],
    emit: listening(),
    v2: "/v2",
    metrics: createMetrics(),
    wrapStores: undefined,
  });
});
describeStoreContract("no optional feature", () =>
  composeStores({ storage: memoryStorage(), base: {}, pullThrough: undefined, manifestSettings: settings, policies: [], emit: NO_EVENTS, v2: "/v2", metrics: undefined, wrapStores: undefined }),
);
