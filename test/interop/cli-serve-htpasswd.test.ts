/**
 * `registry-kit serve` with `auth.htpasswd` (an htpasswd file made by
 * `htpasswd -Bbn`, bcrypt `$2y$`), driven by skopeo with `--creds`: the
 * registry answers a Basic challenge, a user of the file pushes and pulls
 * back with identical digests, and a wrong password is refused.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, tempDir, type Background } from "./helpers/process.js";
import { challenges, startOnConfig } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));

describe("registry-kit serve with auth.htpasswd, with skopeo", () => {
  const work = tempDir("cli-serve-htpasswd");
  const id = randomBytes(3).toString("hex");
  const user = { username: "erin", password: randomBytes(12).toString("base64url") };
  let skopeo: SkopeoSandbox;
  let server: Background | undefined;
  let url = "";
  let host = "";
  let img: TestImage;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    host = `127.0.0.1:${port}`;
    const htpasswd = join(work.path, "htpasswd");
    writeFileSync(htpasswd, execFileSync("htpasswd", ["-Bbn", user.username, user.password]));
    const configPath = join(work.path, "config.yml");
    writeFileSync(configPath, stringify({
      version: 0.1,
      http: { addr: host },
      storage: { filesystem: { rootdirectory: join(work.path, "data", "registry") } },
      auth: { htpasswd: { realm: "basic-realm", path: htpasswd } },
      registrykit: { keydirectory: join(work.path, "data", "keys") },
    }));
    img = buildTestImage(join(work.path, "src"), { sizes: [4096, 150_000] });
    server = await startOnConfig("registry-kit", configPath, work.path, challenges(`${url}/v2/`));
  });
  afterAll(async () => {
    await server?.stop();
    skopeo?.remove();
    work.remove();
  });

  const log = () => `--- registry-kit serve output ---\n${server?.output().slice(-8000)}`;

  it("answers a Basic challenge", async () => {
    const res = await fetch(`${url}/v2/`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Basic realm="basic-realm"');
    await res.arrayBuffer();
  });

  it("a user of the file pushes and pulls back with --creds; a wrong password is refused", async () => {
    const dest = `docker://${host}/team/app-${id}:v1`;
    const push = await skopeo.copy(img.ref, dest, { destCreds: user });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    const back = join(work.path, "back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: user });
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    const wrong = await skopeo.copy(dest, `oci:${join(work.path, "wrong")}:v1`, { srcCreds: { ...user, password: "wrong" } });
    expect(wrong.code).not.toBe(0);
  });
});
