/**
 * A registry with token auth on memory storage, served by the runtime that
 * runs this file: `Bun.serve` on Bun, `Deno.serve` on Deno, registry-kit's
 * `serve` on Node. One port: `/token` is the token service, the rest the
 * registry, `/ui/` the web page. Prints `listening <url>` once bound (127.0.0.1, a free port).
 * Used by test/interop/runtimes-skopeo.test.ts; user `alice`, password from
 * RK_PASSWORD.
 */
import { aclPolicy, createTokenAuthorizer, createTokenService, generatedKeys, memoryCredentials } from "../../src/auth/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { uiApp } from "./ui-app.js";

type Handler = (request: Request) => Promise<Response>;
interface RuntimeGlobals {
  Bun?: { serve(o: { hostname: string; port: number; fetch: Handler }): { port: number } };
  Deno?: { serve(o: { hostname: string; port: number; onListen(a: { port: number }): void }, h: Handler): unknown };
}

const service = "registry.runtime";
const issuer = "registry-kit-runtime";
const keys = generatedKeys({ alg: "ES256" });
const password = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.RK_PASSWORD ?? "alice-Secret-1";
const rules = [{ match: { account: "alice", type: "repository", name: "alice/*" }, actions: ["*"] }];
const credentials = memoryCredentials({ alice: { password } });
const tokens = createTokenService({ issuer, service, keys, checkCredentials: credentials, policy: aclPolicy(rules) });
const storage = memoryStorage();
let registry: Handler | undefined;
let ui: Handler | undefined;
const handler: Handler = (request) => {
  const path = new URL(request.url).pathname;
  return path === "/token" ? tokens(request) : path.startsWith("/ui") ? ui!(request) : registry!(request);
};

async function listen(): Promise<number> {
  const g = globalThis as RuntimeGlobals;
  if (g.Bun) return g.Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler }).port;
  if (g.Deno) {
    const deno = g.Deno;
    return new Promise((resolve) => deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => resolve(port) }, handler));
  }
  const { serve } = await import("../../src/node/index.js");
  return (await serve(handler, { host: "127.0.0.1", port: 0 })).port;
}

const port = await listen();
const url = `http://127.0.0.1:${port}`;
registry = createRegistry({
  storage,
  authorize: createTokenAuthorizer({ realm: `${url}/token`, service, issuer, rootCertBundle: (await keys.exportPem()).certificate }),
});
ui = uiApp({ registry, storage, keys, issuer, service, signIn: credentials, rules });
console.log(`listening ${url}`);
