/**
 * Two store wrappers an embedder would write, with public names only
 * (`registry-kit/registry`): each is a function from the stores below to the
 * stores the registry's handlers call (see docs/stores.md).
 */
import { denied, type RegistryStores, type StoreWrapper } from "registry-kit/registry";

/** Options of {@link blobSizeLimit}. */
export interface BlobSizeLimitOptions {
  /** The largest blob (layer or config) accepted, in bytes. */
  maxBytes: number;
  /** Which repositories the limit applies to. */
  applies: (repository: string) => boolean;
}

/**
 * Refuse blobs larger than `maxBytes` in the repositories `applies` picks,
 * with a 403 `DENIED` whose message clients print. A chunk that would take an
 * upload over the limit is refused before it is stored, and a finished upload
 * over it (e.g. one without `Content-Length`) is refused at its commit.
 */
export function blobSizeLimit({ maxBytes, applies }: BlobSizeLimitOptions): StoreWrapper {
  const refusal = (repository: string, size: number) =>
    denied(`blobs over ${maxBytes} bytes are not accepted in ${repository}`, { size, limit: maxBytes });
  return (below: RegistryStores): RegistryStores => ({
    ...below,
    uploads: {
      ...below.uploads,
      async append(name, session, body, options, call) {
        const after = options.expectedSize + (options.declaredLength ?? 0);
        if (applies(name) && after > maxBytes) throw refusal(name, after);
        return below.uploads.append(name, session, body, options, call);
      },
      async commit(name, session, digest, options, call) {
        if (applies(name) && options.size > maxBytes) {
          await below.uploads.cancel(name, session, call);
          throw refusal(name, options.size);
        }
        return below.uploads.commit(name, session, digest, options, call);
      },
    },
  });
}

/** One entry of {@link LastPulled.report}. */
export interface PullRecord {
  repository: string;
  digest: string;
  kind: "manifest" | "blob";
  /** When it was last pulled, ISO 8601. */
  at: string;
}

/** The wrapper of {@link lastPulled} and its report. */
export interface LastPulled {
  wrap: StoreWrapper;
  /** Every pulled digest with the time of its last pull, most recent first. */
  report(): PullRecord[];
}

/**
 * Record every digest pulled (a manifest or blob GET; a HEAD is no pull) with
 * the time, in memory: a "last pulled" report, e.g. to find images nobody
 * uses any more.
 */
export function lastPulled(now: () => Date = () => new Date()): LastPulled {
  const pulls = new Map<string, PullRecord>();
  const record = (repository: string, digest: string, kind: PullRecord["kind"]) => {
    const key = `${repository}@${digest}`;
    pulls.delete(key);
    pulls.set(key, { repository, digest, kind, at: now().toISOString() });
  };
  const isPull = (request: Request | undefined) => request?.method === "GET";
  const wrap: StoreWrapper = (below) => ({
    ...below,
    manifests: {
      ...below.manifests,
      async get(name, digest, call, known) {
        const manifest = await below.manifests.get(name, digest, call, known);
        if (manifest && isPull(call.request)) record(name, digest.value, "manifest");
        return manifest;
      },
    },
    blobs: {
      ...below.blobs,
      async read(name, digest, options, call) {
        const content = await below.blobs.read(name, digest, options, call);
        if (content && isPull(call.request)) record(name, digest.value, "blob");
        return content;
      },
    },
  });
  return { wrap, report: () => [...pulls.values()].reverse() };
}
