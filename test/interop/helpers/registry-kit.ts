/**
 * registry-kit's registry with the fs storage driver in a temp dir, served
 * in-process by the Node adapter on 127.0.0.1:<free port>, recorded.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { createRegistry } from "../../../src/registry/index.js";
import { fsStorage } from "../../../src/storage/fs/index.js";
import { startDistribution } from "./distribution.js";
import { tempDir } from "./process.js";
import { serveRecorded, type Handler, type RunningService } from "./serve.js";

export { recording, serveRecorded, type RecordedRequest, type Recorder, type RunningService } from "./serve.js";

type RegistryOptions = Parameters<typeof createRegistry>[0];

export interface RegistryKitOptions extends Partial<RegistryOptions> {}

export interface RegistryKit extends RunningService {
  storageRoot: string;
}

/**
 * registry-kit's registry with the fs storage driver in a temp dir, served by
 * the Node adapter. Pass `authorize` (e.g. a token authorizer) to protect it,
 * or `storage` to use another driver.
 */
export async function startRegistryKit(opts: RegistryKitOptions = {}): Promise<RegistryKit> {
  if (process.env.RK_INTEROP_TARGET === "distribution") {
    if (opts.authorize || opts.storage) throw new Error("RK_INTEROP_TARGET=distribution only replaces the registry in tests without auth or custom storage");
    return startDistributionAsRegistryKit();
  }
  const tmp = tempDir("registry-kit");
  const storageRoot = join(tmp.path, "storage");
  try {
    const registry = createRegistry({
      deleteEnabled: true,
      uploadSecret: randomBytes(32).toString("hex"),
      ...opts,
      storage: opts.storage ?? fsStorage({ root: storageRoot }),
    } as RegistryOptions);
    const running = await serveRecorded(registry as Handler);
    return {
      ...running,
      storageRoot,
      async close() {
        await running.close();
        tmp.remove();
      },
    };
  } catch (err) {
    tmp.remove();
    throw err;
  }
}

/**
 * Parity mode: with `RK_INTEROP_TARGET=distribution`, tests that use
 * startRegistryKit() without auth run unchanged against Distribution 2.8, the
 * request record coming from its access log. A test that fails there tests
 * our reading of the standard rather than the standard.
 */
async function startDistributionAsRegistryKit(): Promise<RegistryKit> {
  const d = await startDistribution();
  let skip = 0;
  const requests = () =>
    d.requests().slice(skip).map((r) => ({ ...r, auth: undefined, userAgent: undefined, challenge: undefined }));
  return {
    url: d.url,
    host: d.host,
    storageRoot: d.dataDir,
    recorder: {
      handler: () => Promise.reject(new Error("Distribution is not a fetch handler")),
      get requests() {
        return requests();
      },
      dump: () => requests().map((r) => `${r.method} ${r.path} -> ${r.status}`).join("\n"),
      clear: () => void (skip = d.requests().length),
    },
    close: () => d.stop(),
  };
}
