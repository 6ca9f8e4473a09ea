/**
 * nginx in front of a registry served under `http.prefix`, as such a registry
 * is used: clients (skopeo, podman, docker) only know `/v2/` at the root of a
 * host, so the proxy maps `/v2/…` to `<prefix>/v2/…` and passes `<prefix>/…`
 * (where the registry's `Location` headers, `Link` headers and token realm
 * point) through unchanged, with the client's `Host`.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, requireTool, startBackground, tempDir, waitFor, type Background } from "./process.js";

/** A running proxy. */
export interface PrefixProxy {
  /** host:port, for docker:// references. */
  host: string;
  proc: Background;
  stop(): Promise<void>;
}

/**
 * Start nginx on `port` (default: a free one) in front of
 * `127.0.0.1:<backendPort>`, whose routes are under `prefix` (`/a/b`, no
 * trailing slash).
 */
export async function startPrefixProxy(backendPort: number, prefix: string, port?: number): Promise<PrefixProxy> {
  const tmp = tempDir("prefix-nginx");
  const dir = tmp.path;
  port ??= await freePort();
  const backend = `http://127.0.0.1:${backendPort}`;
  const pass = `proxy_set_header Host $http_host; proxy_set_header X-Forwarded-Proto $scheme;`;
  writeFileSync(join(dir, "nginx.conf"), [
    process.getuid?.() === 0 ? "user root;" : "",
    "daemon off;",
    "worker_processes 1;",
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    "events { worker_connections 256; }",
    "http {",
    `  access_log off; client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;`,
    `  fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
    "  client_max_body_size 0; proxy_request_buffering off; proxy_buffering off; proxy_http_version 1.1;",
    `  server { listen 127.0.0.1:${port};`,
    `    location /v2/ { proxy_pass ${backend}${prefix}/v2/; ${pass} }`,
    `    location ${prefix}/ { proxy_pass ${backend}; ${pass} }`,
    "  }",
    "}",
  ].join("\n"));
  const proc = startBackground(requireTool("nginx"), ["-p", dir, "-e", join(dir, "error.log"), "-c", join(dir, "nginx.conf")]);
  const errors = () => (existsSync(join(dir, "error.log")) ? readFileSync(join(dir, "error.log"), "utf8").slice(-2000) : "");
  try {
    await waitFor(`nginx on 127.0.0.1:${port}`, async () => {
      if (proc.exited()) throw new Error(`nginx exited:\n${proc.output()}\n${errors()}`);
      const res = await fetch(`http://127.0.0.1:${port}/v2/`);
      await res.arrayBuffer();
      return res.status !== 502;
    }, 20_000, () => `${proc.output()}\n${errors()}`);
  } catch (error) {
    await proc.stop(2_000);
    tmp.remove();
    throw error;
  }
  return {
    host: `127.0.0.1:${port}`,
    proc,
    async stop() {
      await proc.stop(3_000);
      tmp.remove();
    },
  };
}
