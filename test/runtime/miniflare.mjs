/**
 * Serve a bundled Workers module with miniflare (workerd) on 127.0.0.1 and a
 * free port; prints `listening <url> workerd <version>`. Run by Node 22+
 * (miniflare's requirement) from `.runtimes/`:
 *   node test/runtime/miniflare.mjs <bundle.mjs> [--r2 BINDING --persist DIR]
 * `--r2` binds a local R2 bucket, kept under DIR (so a restart finds it);
 * RK_BINDINGS (JSON) adds text bindings (vars, secrets) to RK_PASSWORD.
 *
 * Clients reach workerd through a small TCP front that closes a connection
 * opening with a TLS handshake. skopeo with `--tls-verify=false` first tries
 * HTTPS and falls back to HTTP when that fails: Node, Bun and Deno answer a
 * ClientHello at once, but workerd's HTTP listener waits for a request line
 * that never comes, and Go gives the handshake up only after 10 s, once per
 * skopeo run (measured: every push and pull on workerd took ~10 s more).
 */
import { createRequire } from "node:module";
import { connect, createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";

const require = createRequire(join(resolve(import.meta.dirname, "../../.runtimes"), "package.json"));
const { Miniflare } = require("miniflare");
// The workerd this miniflare runs (another one may sit beside it in .runtimes/, @cloudflare/vitest-plugin's).
const workerdVersion = require(require.resolve("workerd/package.json", { paths: [require.resolve("miniflare")] })).version;

const { positionals, values } = parseArgs({ allowPositionals: true, options: { r2: { type: "string" }, persist: { type: "string" } } });
const script = resolve(positionals[0]);
const mf = new Miniflare({
  modules: true,
  scriptPath: script,
  modulesRoot: dirname(script),
  compatibilityDate: "2026-01-01",
  compatibilityFlags: ["nodejs_compat"],
  host: "127.0.0.1",
  port: 0,
  bindings: { RK_PASSWORD: process.env.RK_PASSWORD ?? "alice-Secret-1", ...JSON.parse(process.env.RK_BINDINGS ?? "{}") },
  ...(values.r2 ? { r2Buckets: [values.r2], r2Persist: values.persist ? resolve(values.persist) : false } : {}),
});
const url = await mf.ready;
const TLS_HANDSHAKE = 0x16;
const front = createServer((client) => {
  client.once("data", (first) => {
    if (first[0] === TLS_HANDSHAKE) return client.destroy();
    client.pause(); // until piped: nothing after the first chunk may be dropped
    const upstream = connect(Number(url.port), url.hostname, () => {
      upstream.write(first);
      client.pipe(upstream).pipe(client);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
});
await new Promise((resolve) => front.listen(0, "127.0.0.1", resolve));
console.log(`listening http://127.0.0.1:${front.address().port} workerd ${workerdVersion}`);
process.on("SIGTERM", () => void mf.dispose().then(() => process.exit(0)));
