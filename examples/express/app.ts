/**
 * Mounting registry-kit handlers in an Express 5 application.
 *
 * Two rules: mount them BEFORE any body parser (the registry streams request
 * bodies itself; a parser that has consumed the body leaves it nothing), and
 * let the adapter see the full path: `toNodeListener` reads `req.originalUrl`,
 * so `app.use("/v2", …)` works even though Express strips the mount path from
 * `req.url`.
 */
import express, { type Express } from "express";
import { toNodeListener, type FetchHandler, type NodeListenerOptions } from "registry-kit/node";

/** A handler and the path prefix it owns (`/v2`, `/service/token`, `/api/users`). */
export interface Mount {
  prefix: string;
  handler: FetchHandler;
}

/** An Express app serving `mounts`, followed by the application's own routes. */
export function createExpressApp(mounts: readonly Mount[], options: NodeListenerOptions = {}): Express {
  const app = express();
  app.disable("x-powered-by");
  for (const { prefix, handler } of mounts) app.use(prefix, toNodeListener(handler, options));
  // Body parsers and the application's own routes come after the registry.
  app.use(express.json());
  app.get("/", (_req, res) => {
    res.json({ hello: "from express" });
  });
  return app;
}
