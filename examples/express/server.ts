/**
 * registry-kit inside an Express 5 application: the registry, its token
 * service and the users API, each mounted on its path BEFORE the app's body
 * parsers (see app.ts), next to the application's own routes.
 *
 *   npm install && npm start        # in this folder, after `npm run build` at the root (README.md)
 */
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { createAllInOne, resolveConfig } from "registry-kit/server";
import { createExpressApp } from "./app.js";

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 5000);
  const origin = `http://127.0.0.1:${port}`;
  // The all-in-one composition with its defaults: data under ./data, keys generated once.
  const { config } = resolveConfig({ env: { ...process.env, PORT: String(port) }, cwd: process.cwd() });
  const services = await createAllInOne(config, { origin });
  const app = createExpressApp([
    { prefix: "/v2", handler: services.handler },
    { prefix: "/service/token", handler: services.handler },
    { prefix: "/api/users", handler: services.handler },
  ]);
  // requestTimeout 0: a multi-GB layer upload may take longer than Node's default 5 minutes.
  const server = createServer({ requestTimeout: 0 }, app);
  server.listen(port, "127.0.0.1", () => console.log(`express + registry-kit on ${origin} (registry /v2/, token /service/token, users /api/users)`));
  if (services.info.admin?.password) console.log(`admin password: ${services.info.admin.password}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
