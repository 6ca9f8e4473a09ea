/**
 * The all-in-one server as a real process (`node bin/registry-kit.mjs serve
 * [config.yml]`, through startBackground(), so it dies with the test), plus
 * small clients for its token service and management API.
 */
import { fileURLToPath } from "node:url";
import { startBackground, waitFor, type Background } from "./process.js";

/** bin/registry-kit.mjs of this checkout. */
export const BIN = fileURLToPath(new URL("../../../bin/registry-kit.mjs", import.meta.url));
/** The repository root (where `npm start` runs). */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The banner's last line (src/cli/banner.ts LAST_LINE), printed once start-up is complete. */
export const READY_LINE = "ready; SIGINT (Ctrl-C) or SIGTERM stops the server gracefully";

export interface Creds {
  username: string;
  password: string;
}

export interface AllInOneProcess {
  proc: Background;
  /** `http://127.0.0.1:<port>` from the banner. */
  url: string;
  /** `127.0.0.1:<port>`, for docker:// references. */
  host: string;
  /** The last 8000 characters of its output, for assertion messages. */
  log(): string;
  stop(): Promise<void>;
}

/** The URL in the banner's first line, once the banner is complete. */
export function bannerUrl(output: string): string | undefined {
  if (!output.includes(READY_LINE)) return undefined;
  return /registry-kit listening on (http:\/\/\S+)/.exec(output)?.[1];
}

/**
 * Start `node bin/registry-kit.mjs serve [configPath]` and wait for its
 * banner. Without a config, pass `PORT: "0"` (and `REGISTRY_KIT_DATA`) in env.
 */
export async function startAllInOne(opts: { configPath?: string; env?: NodeJS.ProcessEnv; cwd: string }): Promise<AllInOneProcess> {
  const proc = startBackground(process.execPath, [BIN, "serve", ...(opts.configPath ? [opts.configPath] : [])], {
    cwd: opts.cwd,
    env: { NODE_ENV: "production", ...opts.env },
  });
  const log = () => `--- registry-kit serve output ---\n${proc.output().slice(-8000)}`;
  let url: string | undefined;
  try {
    await waitFor(
      "the registry-kit serve banner",
      async () => {
        if (proc.exited()) throw new Error(`registry-kit serve exited:\n${proc.output()}`);
        url = bannerUrl(proc.output());
        return url !== undefined;
      },
      60_000,
      log,
    );
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return { proc, url: url!, host: new URL(url!).host, log, stop: () => proc.stop() };
}

export const basicAuth = (c: Creds): string => `Basic ${Buffer.from(`${c.username}:${c.password}`).toString("base64")}`;

/** The decoded payload of a JWT (no verification). */
export function jwtPayload(token: string): { iss: string; sub: string; aud: string | string[]; exp: number; access?: Array<{ type: string; name: string; actions: string[] }> } {
  return JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
}

export interface TokenAnswer {
  status: number;
  contentType: string | null;
  body: unknown;
  token?: string;
}

/** `GET <url>/service/token?service=…&scope=…` with optional Basic credentials. */
export async function requestToken(url: string, o: { service: string; scope?: string; creds?: Creds }): Promise<TokenAnswer> {
  const q = new URLSearchParams({ service: o.service, ...(o.scope ? { scope: o.scope } : {}) });
  const res = await fetch(`${url}/service/token?${q}`, { headers: o.creds ? { authorization: basicAuth(o.creds) } : {} });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the assertion message
  }
  const token = res.ok ? (body as { token?: string }).token : undefined;
  return { status: res.status, contentType: res.headers.get("content-type"), body, ...(token ? { token } : {}) };
}

/** The management API at `<url>/api/users`, called as `caller`. */
export function usersApi(url: string, caller: Creds) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/api/users${path}`, {
      method,
      headers: { authorization: basicAuth(caller), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
  };
  return {
    call,
    /** POST /api/users; returns the new user's id (throws unless 201). */
    async create(user: Creds & { email?: string }): Promise<number> {
      const r = await call("POST", "", { username: user.username, email: user.email ?? `${user.username}@example.test`, password: user.password });
      if (r.status !== 201) throw new Error(`POST /api/users for ${user.username}: ${r.status} ${r.text}`);
      return r.json().user_id as number;
    },
    remove: (id: number) => call("DELETE", `/${id}`),
    setSysadmin: (id: number, on: boolean) => call("PUT", `/${id}/sysadmin`, { sysadmin_flag: on }),
  };
}
