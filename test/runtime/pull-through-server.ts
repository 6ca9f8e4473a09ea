/**
 * A pull-through registry (memory storage, no auth) whose one upstream is
 * RK_UPSTREAM, served by the runtime that runs this file: `Bun.serve` on Bun,
 * `Deno.serve` on Deno, registry-kit's `serve` on Node. Prints
 * `listening <url>` once bound (127.0.0.1, a free port). Used by
 * test/interop/runtimes-pull-through.test.ts, whose upstream sends corrupt
 * blobs: each runtime's client must see a cut transfer, never a whole body.
 */
import { registryUpstream } from "../../src/client/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

type Handler = (request: Request) => Promise<Response>;
interface RuntimeGlobals {
  Bun?: { serve(o: { hostname: string; port: number; fetch: Handler }): { port: number } };
  Deno?: { serve(o: { hostname: string; port: number; onListen(a: { port: number }): void }, h: Handler): unknown };
}

const url = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.RK_UPSTREAM;
if (!url) throw new Error("RK_UPSTREAM is not set");
const registry = createRegistry({
  storage: memoryStorage(),
  uploadSecret: "runtime-pull-through",
  pullThrough: { upstreams: [{ prefix: "", upstream: registryUpstream({ url }) }] },
  // Failures go to the output, which the test shows when a step fails.
  log: (event) => console.log(JSON.stringify(event, (_k, v: unknown) => (v instanceof Error ? v.message : v))),
});

async function listen(): Promise<number> {
  const g = globalThis as RuntimeGlobals;
  if (g.Bun) return g.Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: registry }).port;
  if (g.Deno) {
    const deno = g.Deno;
    return new Promise((resolve) => deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => resolve(port) }, registry));
  }
  const { serve } = await import("../../src/node/index.js");
  return (await serve(registry, { host: "127.0.0.1", port: 0 })).port;
}

console.log(`listening http://127.0.0.1:${await listen()}`);
