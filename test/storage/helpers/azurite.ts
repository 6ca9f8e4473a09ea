/**
 * A real Azure Blob service for tests: Azurite (the npm package `azurite`, a
 * devDependency) started as a child process on a free loopback port with its
 * data in a temp directory, one per test file, and a container created in it.
 *
 * ```ts
 * const azurite = useAzurite();        // registers beforeAll/afterAll
 * azureStorage({ ...azurite.options(), rootDirectory: "t1" });
 * ```
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { AzureClient } from "../../../src/storage/azure/client.js";
import type { AzureStorageOptions } from "../../../src/storage/azure/index.js";

/** Azurite's well-known development account (public, documented by Microsoft). */
export const AZURITE_ACCOUNT = "devstoreaccount1";
export const AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface Azurite {
  /** `http://127.0.0.1:<port>/devstoreaccount1` */
  readonly serviceURL: string;
  readonly container: string;
  /** Driver options for this server and container. */
  options(): AzureStorageOptions;
  /** The child process (to kill it in a test). */
  readonly process: ChildProcess;
}

/** The path of Azurite's blob service entry point, from the installed package. */
function azuriteBlobMain(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("azurite/package.json")), "dist/src/blob/main.js");
}

/** Start Azurite and wait for the port it listens on. */
export async function startAzurite(location: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [
    azuriteBlobMain(), "--blobHost", "127.0.0.1", "--blobPort", "0", "--location", location,
    "--skipApiVersionCheck", "--disableTelemetry", "--silent",
  ], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`azurite did not start within 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /successfully listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        // Stop buffering the output; keep draining the pipes.
        child.stdout!.removeListener("data", onData);
        child.stdout!.resume();
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`azurite exited with ${code}:\n${output}`));
    });
  });
  return { child, port };
}

/** Create a container (PUT ?restype=container) with the driver's own signing. */
export async function createContainer(serviceURL: string, container: string): Promise<void> {
  const client = new AzureClient({
    account: AZURITE_ACCOUNT, accountKey: AZURITE_KEY, container, serviceURL: new URL(serviceURL), maxRetries: 2, retryBaseMs: 50, fetch: globalThis.fetch,
  });
  const response = await client.send({ op: "create container", method: "PUT", query: { restype: "container" }, accept: [409] });
  await response.body?.cancel();
}

/** Start Azurite before the file's tests, create a container, stop it after them. */
export function useAzurite(options: { container?: string } = {}): Azurite {
  const container = options.container ?? "registry-kit-test";
  let dir = "";
  let child: ChildProcess | undefined;
  let serviceURL = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "azurite-"));
    const started = await startAzurite(dir);
    child = started.child;
    serviceURL = `http://127.0.0.1:${started.port}/${AZURITE_ACCOUNT}`;
    await createContainer(serviceURL, container);
  }, 60_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    get serviceURL() {
      return serviceURL;
    },
    container,
    options: () => ({ accountName: AZURITE_ACCOUNT, accountKey: AZURITE_KEY, container, serviceURL }),
    get process() {
      return child!;
    },
  };
}

let roots = 0;
/** A root directory no other test of this process uses. */
export function freshRoot(label: string): string {
  return `${label}-${process.pid}-${Date.now().toString(36)}-${++roots}`;
}
