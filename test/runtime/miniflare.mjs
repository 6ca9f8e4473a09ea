/**
 * Serve a bundled Workers module with miniflare (workerd) on 127.0.0.1 and a
 * free port; prints `listening <url> workerd <version>`. Run by Node 22+
 * (miniflare's requirement) from `.runtimes/`:
 *   node test/runtime/miniflare.mjs <bundle.mjs>
 */
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";

const require = createRequire(join(resolve(import.meta.dirname, "../../.runtimes"), "package.json"));
const { Miniflare } = require("miniflare");
const workerdVersion = require("workerd/package.json").version;

const mf = new Miniflare({
  modules: true,
  scriptPath: resolve(process.argv[2]),
  modulesRoot: dirname(resolve(process.argv[2])),
  compatibilityDate: "2026-01-01",
  compatibilityFlags: ["nodejs_compat"],
  host: "127.0.0.1",
  port: 0,
  bindings: { RK_PASSWORD: process.env.RK_PASSWORD ?? "alice-Secret-1" },
});
const url = await mf.ready;
console.log(`listening ${url.origin} workerd ${workerdVersion}`);
process.on("SIGTERM", () => void mf.dispose().then(() => process.exit(0)));
