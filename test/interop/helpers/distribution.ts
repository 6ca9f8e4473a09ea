/**
 * The reference registry: Debian's `docker-registry` (CNCF Distribution
 * 2.8.x), run as `docker-registry serve <config.yml>` on 127.0.0.1 with
 * filesystem storage in a temp dir.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort, requireTool, startBackground, tempDir, waitFor, type Background } from "./process.js";

export interface DistributionTokenAuth {
  realm: string;
  service: string;
  issuer: string;
  /** Absolute path of a PEM certificate bundle. */
  rootcertbundle: string;
}

export interface DistributionOptions {
  auth?: DistributionTokenAuth;
  deleteEnabled?: boolean;
}

export interface Distribution {
  url: string;
  /** host:port, for docker:// references. */
  host: string;
  dataDir: string;
  configPath: string;
  /** The registry's log so far (JSON lines: app log and access log). */
  log(): string;
  /** Access-log lines `METHOD path status`, parsed from the log. */
  requests(): Array<{ method: string; path: string; status: number }>;
  stop(): Promise<void>;
}

export async function startDistribution(opts: DistributionOptions = {}): Promise<Distribution> {
  const bin = requireTool("docker-registry");
  const tmp = tempDir("distribution");
  const port = await freePort();
  const dataDir = join(tmp.path, "data");
  const config: Record<string, unknown> = {
    version: 0.1,
    log: { level: "info", formatter: "json", accesslog: { disabled: false } },
    storage: {
      filesystem: { rootdirectory: dataDir },
      delete: { enabled: opts.deleteEnabled ?? true },
      cache: { blobdescriptor: "inmemory" },
      maintenance: { uploadpurging: { enabled: false } },
    },
    http: { addr: `127.0.0.1:${port}`, secret: "registry-kit-interop-secret", headers: { "X-Content-Type-Options": ["nosniff"] } },
  };
  if (opts.auth) config.auth = { token: { ...opts.auth } };
  const configPath = join(tmp.path, "config.yml");
  writeFileSync(configPath, stringify(config));

  let proc: Background | undefined;
  const url = `http://127.0.0.1:${port}`;
  try {
    proc = startBackground(bin, ["serve", configPath], { cwd: tmp.path });
    const p = proc;
    await waitFor(
      `docker-registry to answer ${url}/v2/`,
      async () => {
        if (p.exited()) throw new Error(`docker-registry exited early:\n${p.output()}`);
        const res = await fetch(`${url}/v2/`);
        await res.arrayBuffer();
        return res.status === 200 || res.status === 401;
      },
      20_000,
      () => p.output(),
    );
  } catch (err) {
    await proc?.stop();
    tmp.remove();
    throw err;
  }
  const p = proc;
  return {
    url,
    host: `127.0.0.1:${port}`,
    dataDir,
    configPath,
    log: () => p.output(),
    requests() {
      const out: Array<{ method: string; path: string; status: number }> = [];
      // Access log, combined format: 127.0.0.1 - - [date] "POST /v2/… HTTP/1.1" 201 0 "" "ua"
      const re = /"([A-Z]+) (\S+) HTTP\/[\d.]+" (\d{3}) /g;
      for (const m of p.output().matchAll(re)) out.push({ method: m[1]!, path: m[2]!, status: Number(m[3]) });
      return out;
    },
    async stop() {
      await p.stop();
      tmp.remove();
    },
  };
}
