/**
 * The registry of pull-through-server.ts as a Workers module, for workerd
 * through miniflare: memory storage, no auth, its one upstream the
 * RK_UPSTREAM binding. Built in the first request (workerd refuses random
 * values and timers at global scope). Bundled by esbuild in
 * test/interop/runtimes-pull-through.test.ts.
 */
import { registryUpstream } from "../../src/client/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

interface Env {
  RK_UPSTREAM: string;
}
type Handler = (request: Request) => Promise<Response>;

let registry: Handler | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    registry ??= createRegistry({
      storage: memoryStorage(),
      uploadSecret: "runtime-pull-through",
      pullThrough: { upstreams: [{ prefix: "", upstream: registryUpstream({ url: env.RK_UPSTREAM }) }] },
      log: (event) => console.log(JSON.stringify(event, (_k, v: unknown) => (v instanceof Error ? v.message : v))),
    });
    return registry(request);
  },
};
