/**
 * registry-kit with features of your own: an open registry in memory whose
 * stores are wrapped by the two wrappers of wrappers.ts, and a small route
 * showing the "last pulled" report.
 *
 *   npm install && npm start        # http://127.0.0.1:5000/v2/, report at /last-pulled
 */
import { pathToFileURL } from "node:url";
import { createRegistry } from "registry-kit/registry";
import { memoryStorage } from "registry-kit/storage/memory";
import { serve } from "registry-kit/node";
import { blobSizeLimit, lastPulled } from "./wrappers.js";

/** The registry and the report route as one handler. */
export function composedRegistry(maxBytes = 100 * 1024 * 1024): (request: Request) => Promise<Response> {
  const pulled = lastPulled();
  const registry = createRegistry({
    storage: memoryStorage(),
    uploadSecret: process.env.UPLOAD_SECRET ?? "change-me",
    // The first wrapper is the outermost: a refused blob is never recorded or stored.
    wrapStores: [blobSizeLimit({ maxBytes, applies: (name) => name.startsWith("limited/") }), pulled.wrap],
  });
  return async (request) => {
    if (new URL(request.url).pathname === "/last-pulled") return Response.json(pulled.report());
    return registry(request);
  };
}

async function main(): Promise<void> {
  const server = await serve(composedRegistry(), { host: process.env.HOST ?? "127.0.0.1", port: Number(process.env.PORT ?? 5000) });
  console.log(`registry on ${server.url}/v2/ (blobs over 100 MiB refused under limited/), report at ${server.url}/last-pulled`);
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void server.close().then(() => process.exit(0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
