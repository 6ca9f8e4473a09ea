/**
 * Instrumentation as a store wrapper: `registrykit_blob_upload_bytes_total`
 * counts the bytes of upload bodies stored (chunked bodies included).
 * Assembled only when the registry has metrics.
 *
 * @module
 */
import type { Metrics } from "../../util/metrics.js";
import type { StoreWrapper } from "../stores/types.js";

/** The metrics wrapper over `metrics`. */
export function metricsStores(metrics: Metrics): StoreWrapper {
  const received = metrics.counter("registrykit_blob_upload_bytes_total", "Bytes of blob upload bodies received and stored (chunked bodies included)").labels();
  return (below) => ({
    ...below,
    uploads: {
      ...below.uploads,
      async append(name, session, body, options, call) {
        const appended = await below.uploads.append(name, session, body, options, call);
        received.inc(appended.written);
        return appended;
      },
    },
  });
}
