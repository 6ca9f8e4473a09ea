/**
 * Debian's default `/etc/docker/registry/config.yml` (package
 * `docker-registry`), side by side on the same file (issue 17): Distribution
 * 2.8 and `registry-kit serve` both start on it with only the storage root
 * and the listen address rewritten. Its htpasswd `path` names a directory:
 * both challenge a request without credentials (401) and refuse one with
 * credentials with 400 (the credential file is unusable). With `path` pointed
 * at an htpasswd file, skopeo pushes and pulls through both alike.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, requireTool, tempDir } from "./helpers/process.js";
import { started, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const DEBIAN_CONFIG = "/etc/docker/registry/config.yml";

/** Debian's file with `storage.filesystem.rootdirectory` and `http.addr` rewritten, and nothing else. */
function debianConfig(root: string, addr: string, htpasswdPath?: string): Record<string, unknown> {
  const doc = parse(readFileSync(DEBIAN_CONFIG, "utf8")) as {
    storage: { filesystem: { rootdirectory: string } };
    http: { addr: string };
    auth: { htpasswd: { path: string } };
  };
  doc.storage.filesystem.rootdirectory = root;
  doc.http.addr = addr;
  if (htpasswdPath !== undefined) doc.auth.htpasswd.path = htpasswdPath;
  return doc as unknown as Record<string, unknown>;
}

interface Outcome {
  anonymous: number;
  withCredentials: number;
  challenge: string | null;
}

describe("Debian's default docker-registry config, both registries", () => {
  const work = tempDir("same-config-debian");
  const user = { username: "deb", password: "deb-password-1" };
  let skopeo: SkopeoSandbox;
  let img: TestImage;
  let htpasswd = "";
  const outcomes: Partial<Record<SameConfigServer, Outcome>> = {};
  const pulled: Partial<Record<SameConfigServer, string[]>> = {};

  beforeAll(() => {
    requireTool("docker-registry"); // the package that installs the file
    skopeo = skopeoSandbox();
    img = buildTestImage(join(work.path, "src"), { sizes: [1024, 30_000] });
    htpasswd = join(work.path, "htpasswd");
    writeFileSync(htpasswd, execFileSync("htpasswd", ["-Bbn", user.username, user.password]));
  });
  afterAll(() => {
    skopeo?.remove();
    work.remove();
  });

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: unmodified (path names a directory) it starts, challenges, and refuses every credential`, async () => {
      expect(parse(readFileSync(DEBIAN_CONFIG, "utf8")).auth.htpasswd.path).toBe("/etc/docker/registry");
      const dir = join(work.path, which, "default");
      mkdirSync(dir, { recursive: true });
      const port = await freePort();
      const config = writeConfig(dir, debianConfig(join(dir, "data"), `127.0.0.1:${port}`));
      const server = await startOnConfig(which, config, dir, started(`http://127.0.0.1:${port}/v2/`));
      try {
        const anonymous = await fetch(`http://127.0.0.1:${port}/v2/`);
        await anonymous.arrayBuffer();
        const withCredentials = await fetch(`http://127.0.0.1:${port}/v2/`, {
          headers: { authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}` },
        });
        await withCredentials.arrayBuffer();
        outcomes[which] = { anonymous: anonymous.status, withCredentials: withCredentials.status, challenge: anonymous.headers.get("www-authenticate") };
        expect(outcomes[which]).toEqual({ anonymous: 401, withCredentials: 400, challenge: 'Basic realm="basic-realm"' });
        const push = await skopeo.copy(img.ref, `docker://127.0.0.1:${port}/deb/app:v1`, { destCreds: user });
        expect(push.code, describeRun(push)).not.toBe(0);
      } finally {
        await server.stop();
      }
    });

    it(`${which}: with path pointing at an htpasswd file, skopeo pushes and pulls`, async () => {
      const dir = join(work.path, which, "file");
      mkdirSync(dir, { recursive: true });
      const port = await freePort();
      const config = writeConfig(dir, debianConfig(join(dir, "data"), `127.0.0.1:${port}`, htpasswd));
      const server = await startOnConfig(which, config, dir, started(`http://127.0.0.1:${port}/v2/`));
      try {
        const dest = `docker://127.0.0.1:${port}/deb/app:v1`;
        const push = await skopeo.copy(img.ref, dest, { destCreds: user });
        expect(push.code, describeRun(push)).toBe(0);
        const back = join(dir, "back");
        const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: user });
        expect(pull.code, describeRun(pull)).toBe(0);
        const got = readOciLayout(back, "v1");
        expect(got.manifestDigest).toBe(img.manifestDigest);
        pulled[which] = [got.manifestDigest, ...got.layerDigests];
      } finally {
        await server.stop();
      }
    });
  }

  it("both answered alike", () => {
    expect(outcomes["registry-kit"]).toBeDefined();
    expect(outcomes["registry-kit"]).toEqual(outcomes.distribution);
    expect(pulled["registry-kit"]).toBeDefined();
    expect(pulled["registry-kit"]).toEqual(pulled.distribution);
  });
});
