/**
 * registry-kit's registry with the fs storage driver in a temp dir, served
 * in-process by the Node adapter on 127.0.0.1:<free port>, recorded.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { createRegistry } from "../../../src/registry/index.js";
import { fsStorage } from "../../../src/storage/fs/index.js";
import { tempDir } from "./process.js";
import { serveRecorded, type Handler, type RunningService } from "./serve.js";

export { recording, serveRecorded, type RecordedRequest, type Recorder, type RunningService } from "./serve.js";

type RegistryOptions = Parameters<typeof createRegistry>[0];

export interface RegistryKitOptions extends Partial<Omit<RegistryOptions, "storage">> {}

export interface RegistryKit extends RunningService {
  storageRoot: string;
}

/**
 * registry-kit's registry with the fs storage driver in a temp dir, served by
 * the Node adapter. Pass `authorize` (e.g. a token authorizer) to protect it.
 */
export async function startRegistryKit(opts: RegistryKitOptions = {}): Promise<RegistryKit> {
  const tmp = tempDir("registry-kit");
  const storageRoot = join(tmp.path, "storage");
  try {
    const registry = createRegistry({
      deleteEnabled: true,
      uploadSecret: randomBytes(32).toString("hex"),
      ...opts,
      storage: fsStorage({ root: storageRoot }),
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
