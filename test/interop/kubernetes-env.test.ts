/**
 * The variables Kubernetes sets for a Service named `registry`
 * (`REGISTRY_PORT=tcp://…`, `REGISTRY_SERVICE_HOST`, `REGISTRY_PORT_5000_TCP_ADDR`, …),
 * side by side (issue 43, part 5): Debian's `docker-registry` (Distribution
 * 2.8) and `registry-kit serve` start on the same config with the same
 * environment, both log `Ignoring unrecognized environment variable <NAME>`
 * for each of them, and both still take the known overrides
 * (`REGISTRY_HTTP_ADDR` moves the listener, `REGISTRY_STORAGE_DELETE_ENABLED`
 * allows a manifest DELETE).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, tempDir } from "./helpers/process.js";
import { started, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";

/** What the kubelet injects for `Service/registry` with one port named `http` (5000/TCP). */
const KUBERNETES = {
  REGISTRY_PORT: "tcp://10.0.0.1:5000",
  REGISTRY_PORT_5000_TCP: "tcp://10.0.0.1:5000",
  REGISTRY_PORT_5000_TCP_ADDR: "10.0.0.1",
  REGISTRY_PORT_5000_TCP_PORT: "5000",
  REGISTRY_PORT_5000_TCP_PROTO: "tcp",
  REGISTRY_SERVICE_HOST: "10.0.0.1",
  REGISTRY_SERVICE_PORT: "5000",
  REGISTRY_SERVICE_PORT_HTTP: "5000",
};

interface Outcome {
  ignored: string[];
  deleteStatus: number;
}

describe("Kubernetes service variables, both registries", () => {
  const work = tempDir("kubernetes-env");
  const outcomes: Partial<Record<SameConfigServer, Outcome>> = {};
  afterAll(() => work.remove());

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: starts, warns about each one, and still takes REGISTRY_HTTP_ADDR and REGISTRY_STORAGE_DELETE_ENABLED`, async () => {
      const dir = join(work.path, which);
      mkdirSync(dir, { recursive: true });
      const [filePort, port] = [await freePort(), await freePort()];
      // The file's address is never listened on: the variable moves it.
      const config = writeConfig(dir, {
        version: 0.1,
        storage: { filesystem: { rootdirectory: join(dir, "data") } },
        http: { addr: `127.0.0.1:${filePort}`, secret: "kubernetes-env-test" },
      });
      const env = { ...KUBERNETES, REGISTRY_HTTP_ADDR: `127.0.0.1:${port}`, REGISTRY_STORAGE_DELETE_ENABLED: "true" };
      const server = await startOnConfig(which, config, dir, started(`http://127.0.0.1:${port}/v2/`), 60_000, { env });
      try {
        // Delete allowed: an unknown manifest is 404 MANIFEST_UNKNOWN, not 405 UNSUPPORTED.
        const del = await fetch(`http://127.0.0.1:${port}/v2/k8s/app/manifests/sha256:${"a".repeat(64)}`, { method: "DELETE" });
        await del.arrayBuffer();
        const ignored = [...server.output().matchAll(/Ignoring unrecognized environment variable (\w+)/g)].map((m) => m[1]!).sort();
        outcomes[which] = { ignored, deleteStatus: del.status };
        expect(outcomes[which]).toEqual({ ignored: Object.keys(KUBERNETES).sort(), deleteStatus: 404 });
        await expect(fetch(`http://127.0.0.1:${filePort}/v2/`)).rejects.toThrow();
      } finally {
        await server.stop();
      }
    });
  }

  it("both answered alike", () => {
    expect(outcomes["registry-kit"]).toBeDefined();
    expect(outcomes["registry-kit"]).toEqual(outcomes.distribution);
  });
});
