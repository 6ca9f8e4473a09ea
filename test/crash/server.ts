/**
 * The crash harness's server: the real CLI (`node bin/registry-kit.mjs serve`,
 * no CONFIG, so the built-in defaults as a user gets them) as a child process on
 * a free loopback port, with a data directory kept across restarts. With no
 * dist/ the bin runs the sources through tsx in the same process, so the pid we
 * SIGKILL is the server itself. Start-up takes well under a second, so no
 * dedicated server script is needed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
export const ADMIN_PASSWORD = "CrashAdm1nPassword";
export const ADMIN_BASIC = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString("base64")}`;

export interface Server {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<void>;
}

/** Every child started here, so that a failing test still kills them. */
export const started = new Set<ChildProcess>();

export function spawnServer(data: string, env: Record<string, string> = {}): { child: ChildProcess; ready: Promise<Server> } {
  const child = spawn(process.execPath, [BIN, "serve"], {
    cwd: data,
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      REGISTRY_KIT_DATA: data,
      REGISTRY_KIT_ADMIN_PASSWORD: ADMIN_PASSWORD,
      REGISTRY_STORAGE_DELETE_ENABLED: "true",
      REGISTRY_LOG_ACCESSLOG_DISABLED: "true",
      REGISTRY_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => {
    started.delete(child);
    resolve();
  }));
  const ready = new Promise<Server>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server not ready after 30 s:\n${out}`)), 30_000);
    const check = (): void => {
      const match = /registry-kit listening on (http:\/\/\S+)/.exec(out);
      if (match && out.includes("  ready;")) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, output: () => out, exited });
      }
    };
    child.stdout!.on("data", check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited before it was ready:\n${out}`));
    });
  });
  ready.catch(() => {});
  return { child, ready };
}

/** SIGKILL and wait for the exit. */
export async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  await gone;
}
