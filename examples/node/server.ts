/**
 * registry-kit on plain `node:http`.
 *
 *   npx tsx examples/node/server.ts        # http://127.0.0.1:5000/v2/
 *
 * The adapter lives in the package (`registry-kit/node`) because the CLI uses
 * it too; this file re-exports it for the examples and shows the smallest setup:
 * an open in-memory registry. For token auth and users see examples/express
 * and examples/hono, or run `registry-kit serve`.
 */
import { pathToFileURL } from "node:url";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { serve } from "../../src/node/index.js";

export { createNodeListeners, serve, toNodeListener } from "../../src/node/index.js";
export type { FetchHandler, NodeListenerOptions, RunningServer, ServeOptions } from "../../src/node/index.js";

async function main(): Promise<void> {
  const registry = createRegistry({ storage: memoryStorage(), uploadSecret: process.env.UPLOAD_SECRET ?? "change-me" });
  const server = await serve(registry, { host: process.env.HOST ?? "127.0.0.1", port: Number(process.env.PORT ?? 5000) });
  console.log(`registry (open, in memory) on ${server.url}/v2/`);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void server.close().then(() => process.exit(0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
