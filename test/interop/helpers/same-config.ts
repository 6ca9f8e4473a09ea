/**
 * Side by side on one config file: start Debian's `docker-registry`
 * (Distribution 2.8) or `registry-kit serve` on exactly the same `config.yml`,
 * so a test can compare what real clients see from each (issue 17).
 *
 * The caller writes the config (with `http.addr` on a free port from
 * {@link freePort}) and says when the server is ready: a plain `/v2/` fetch
 * does not work for TLS or a prefix, so readiness is a probe of the caller's.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { requireTool, startBackground, waitFor, type Background } from "./process.js";

/** Which registry to start on the config. */
export type SameConfigServer = "distribution" | "registry-kit";

const BIN = fileURLToPath(new URL("../../../bin/registry-kit.mjs", import.meta.url));

/** Write `document` as YAML to `<dir>/<name>` and return its path. */
export function writeConfig(dir: string, document: Record<string, unknown>, name = "config.yml"): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(document));
  return path;
}

/** More of how a server is started: extra environment, and a user to run as. */
export interface StartOptions {
  /** Added to the environment (both servers get the same). */
  env?: NodeJS.ProcessEnv;
  /** Run as this user (and its primary group) through `setpriv`, e.g. `nobody`. */
  user?: { uid: number; gid: number };
}

/**
 * Start `which` on `configPath` (cwd `dir`) and wait until `ready()` is true.
 * Fails with the server's output when it exits first or never gets ready.
 * The caller stops the returned process (`await server.stop()`).
 */
export async function startOnConfig(
  which: SameConfigServer,
  configPath: string,
  dir: string,
  ready: () => Promise<boolean>,
  timeoutMs = 60_000,
  options: StartOptions = {},
): Promise<Background> {
  const [cmd, args] = which === "distribution"
    ? [requireTool("docker-registry"), ["serve", configPath]]
    : [process.execPath, [BIN, "serve", configPath]];
  const env = { ...(which === "registry-kit" ? { NODE_ENV: "production" } : {}), ...options.env };
  const user = options.user;
  const proc = user
    ? startBackground(requireTool("setpriv"), [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--", cmd, ...args], { cwd: dir, env })
    : startBackground(cmd, args, { cwd: dir, env });
  try {
    // A server that exits ends the wait at once (a throw in the probe would only be retried).
    await waitFor(`${which} to start on ${configPath}`, async () => proc.exited() || (await ready().catch(() => false)), timeoutMs, () => proc.output());
    if (proc.exited()) throw new Error(`${which} exited:\n${proc.output()}`);
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return proc;
}

/**
 * A readiness probe: `url` answers with any HTTP status but 503 (the body is
 * drained). `registry-kit serve` binds first and answers 503 until it has
 * started; a test of a 503 on purpose (health checks) needs a probe of its own.
 */
export function answers(url: string, init?: RequestInit): () => Promise<boolean> {
  return async () => {
    const res = await fetch(url, init);
    await res.arrayBuffer();
    return res.status !== 503;
  };
}

/**
 * A readiness probe: `url` answers with anything but 503, which
 * `registry-kit serve` answers while it is still starting.
 */
export function started(url: string): () => Promise<boolean> {
  return async () => {
    const res = await fetch(url);
    await res.arrayBuffer();
    return res.status !== 503;
  };
}

/** A readiness probe: `url` answers 401 (a registry with auth that has started). */
export function challenges(url: string): () => Promise<boolean> {
  return async () => {
    const res = await fetch(url);
    await res.arrayBuffer();
    return res.status === 401;
  };
}
