/**
 * Mounting registry-kit handlers in a Hono application. Hono already speaks
 * the Fetch API, so the handler gets `c.req.raw` unchanged.
 */
import { Hono } from "hono";
import type { FetchHandler } from "registry-kit/node";

/** A handler and the path prefix it owns (`/v2`, `/service/token`, `/api/users`). */
export interface Mount {
  prefix: string;
  handler: FetchHandler;
}

/** A Hono app serving `mounts` (the prefix itself and everything below it). */
export function createHonoApp(mounts: readonly Mount[]): Hono {
  const app = new Hono();
  // Hono's node server falls back to the listening address when an HTTP/1.0
  // request has no Host; refuse instead, like registry-kit's own adapter.
  app.use(async (c, next) => {
    if (!c.req.header("host")) return c.json({ errors: [{ code: "BAD_REQUEST", message: "missing Host header", detail: null }] }, 400);
    await next();
  });
  // A generic 500 body; the handler's error stays in the log.
  app.onError((error, c) => {
    console.error("registry-kit handler failed:", error);
    return c.json({ errors: [{ code: "UNKNOWN", message: "internal server error", detail: null }] }, 500);
  });
  for (const { prefix, handler } of mounts) {
    app.all(prefix, (c) => handler(c.req.raw));
    app.all(`${prefix}/*`, (c) => handler(c.req.raw));
  }
  app.get("/", (c) => c.json({ hello: "from hono" }));
  return app;
}
