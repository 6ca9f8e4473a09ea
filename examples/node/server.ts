/**
 * registry-kit on plain `node:http`: the smallest setup, an open registry
 * kept in memory, served by the package's Node adapter (`registry-kit/node`).
 *
 *   npm install && npm start        # http://127.0.0.1:5000/v2/ (see README.md)
 *
 * For token auth and users see examples/express and examples/hono, or run
 * `registry-kit serve`.
 */
import { pathToFileURL } from "node:url";
import { createRegistry } from "registry-kit/registry";
import { memoryStorage } from "registry-kit/storage/memory";
import { serve } from "registry-kit/node";

async function main(): Promise<void> {
  const registry = createRegistry({ storage: memoryStorage(), uploadSecret: process.env.UPLOAD_SECRET ?? "change-me" });
  const server = await serve(registry, { host: process.env.HOST ?? "127.0.0.1", port: Number(process.env.PORT ?? 5000) });
  console.log(`registry (open, in memory) on ${server.url}/v2/`);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void server.close().then(() => process.exit(0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
