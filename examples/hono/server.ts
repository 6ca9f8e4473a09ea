/**
 * registry-kit inside a Hono application on `@hono/node-server`.
 * Hono hands the handler the WHATWG Request itself: `registry(c.req.raw)`.
 *
 *   npm install && npm start        # in this folder, after `npm run build` at the root (README.md)
 */
import { serve } from "@hono/node-server";
import { pathToFileURL } from "node:url";
import { createAllInOne, resolveConfig } from "registry-kit/server";
import { createHonoApp } from "./app.js";

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 5000);
  const origin = `http://127.0.0.1:${port}`;
  const { config } = resolveConfig({ env: { ...process.env, PORT: String(port) }, cwd: process.cwd() });
  const services = await createAllInOne(config, { origin });
  const app = createHonoApp([
    { prefix: "/v2", handler: services.handler },
    { prefix: "/service/token", handler: services.handler },
    { prefix: "/api/users", handler: services.handler },
  ]);
  // requestTimeout 0: a multi-GB layer upload may take longer than Node's default 5 minutes.
  serve({ fetch: app.fetch, port, hostname: "127.0.0.1", serverOptions: { requestTimeout: 0 } }, () =>
    console.log(`hono + registry-kit on ${origin} (registry /v2/, token /service/token, users /api/users)`),
  );
  if (services.info.admin?.password) console.log(`admin password: ${services.info.admin.password}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
