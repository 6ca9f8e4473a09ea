/**
 * The same registry as server.ts (registry + token service on one origin,
 * memory storage, user `alice`) as a Workers module, for workerd through
 * miniflare. The realm is taken from the first request's origin, since a
 * worker does not know its own address, and everything is built in that
 * request (workerd refuses random values and timers at global scope). Bundled by esbuild in
 * test/interop/runtimes-skopeo.test.ts.
 */
import { aclPolicy, createTokenAuthorizer, createTokenService, generatedKeys, memoryCredentials } from "../../src/auth/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { uiApp } from "./ui-app.js";

interface Env {
  RK_PASSWORD?: string;
}
type Handler = (request: Request) => Promise<Response>;

const service = "registry.runtime";
const issuer = "registry-kit-runtime";
let app: Promise<{ tokens: Handler; registry: Handler; ui: Handler }> | undefined;

// Built in the first request: workerd forbids random values and timers at global scope.
async function build(origin: string, env: Env) {
  const keys = generatedKeys({ alg: "ES256" });
  const rules = [{ match: { account: "alice", type: "repository", name: "alice/*" }, actions: ["*"] }];
  const credentials = memoryCredentials({ alice: { password: env.RK_PASSWORD ?? "alice-Secret-1" } });
  const tokens = createTokenService({
    issuer,
    service,
    keys,
    checkCredentials: credentials,
    policy: aclPolicy(rules),
    // Failures go to the worker's log, which the test shows when a step fails.
    log: (event) => console.log(JSON.stringify(event)),
  });
  const authorize = createTokenAuthorizer({ realm: `${origin}/token`, service, issuer, rootCertBundle: (await keys.exportPem()).certificate });
  const storage = memoryStorage();
  const registry = createRegistry({ storage, authorize });
  return { tokens, registry, ui: uiApp({ registry, storage, keys, issuer, service, signIn: credentials, rules }) };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const { tokens, registry, ui } = await (app ??= build(url.origin, env));
    return url.pathname === "/token" ? tokens(request) : url.pathname.startsWith("/ui") ? ui(request) : registry(request);
  },
};
