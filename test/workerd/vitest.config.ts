/**
 * The vitest configuration of the workerd line of scripts/runtimes.mjs: the
 * core's hermetic suites, and the R2 driver's contract suite
 * (test/workerd/r2.test.ts), run inside workerd by @cloudflare/vitest-plugin
 * with miniflare's local R2 bucket bound as `BUCKET`. The plugin (with
 * wrangler and miniflare) is installed into .runtimes/ by
 * scripts/runtimes.mjs and this run uses the Node 24 binary there: they need
 * Node 22+, while the project's own dev dependencies stay on Node 20.
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { defineConfig, type Plugin } from "vitest/config";
import { INTEROP, SYSTEM } from "../../vitest.config.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PLUGIN = join(ROOT, ".runtimes/node_modules/@cloudflare/vitest-plugin/dist/pool/index.mjs");
const { cloudflareTest } = (await import(pathToFileURL(PLUGIN).href)) as { cloudflareTest: (options: unknown) => Plugin };

const src = join(ROOT, "src/");
const expect = process.env.RK_EXPECT_RUNTIME;

export default defineConfig({
  root: ROOT,
  resolve: {
    alias: [
      { find: /^registry-kit$/, replacement: `${src}index.ts` },
      { find: /^registry-kit\/(.+)$/, replacement: `${src}$1/index.ts` },
    ],
  },
  plugins: [
    cloudflareTest({
      miniflare: {
        compatibilityDate: "2026-01-01",
        compatibilityFlags: ["nodejs_compat"],
        r2Buckets: ["BUCKET"],
        // Reaches the suites as process.env (nodejs_compat): test/runtime/identity.test.ts.
        bindings: expect ? { RK_EXPECT_RUNTIME: expect } : {},
      },
    }),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    // Not test/setup/hermetic.ts: workerd itself can neither start a process nor listen on a socket.
    setupFiles: ["test/workerd/setup.ts"],
    exclude: [...SYSTEM, ...INTEROP],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // One workerd for all the files of a worker, as the unit project shares one module graph:
    // isolated, every file would start a Miniflare of its own (seconds each).
    isolate: false,
    // The hashes bundled once by esbuild, as a Worker's bundle has them, not run module by module through
    // vite's module runner (test/users/password.test.ts alone: 3.8 s a scrypt hash, 0.4 s so).
    deps: { optimizer: { ssr: { enabled: true, include: ["@noble/hashes/scrypt.js", "@noble/hashes/sha2.js", "@noble/hashes/legacy.js"] } } },
    maxWorkers: 2,
  },
});
