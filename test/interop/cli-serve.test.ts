/**
 * The all-in-one server as users run it — `node bin/registry-kit.mjs serve
 * config.yml` in its own process, configured with a Distribution-style
 * config.yml plus the `registrykit` section — driven by skopeo:
 *
 * - the registry answers with a challenge naming its own token service;
 * - an administrator creates a user through /api/users;
 * - that user pushes to their own namespace (default policy) and pulls back
 *   with identical digests, and cannot push into someone else's;
 * - an anonymous pull works for a configured public repository and fails
 *   for a private one;
 * - after SIGTERM and a restart on the same data directory, the images, the
 *   user and the signing key are still there.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, startBackground, tempDir, waitFor, type Background } from "./helpers/process.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
const admin = { username: "admin", password: "Adm1n-Interop-Pass" };
const carol = { username: "carol", password: "Car0l-Interop-Pass" };

describe("registry-kit serve (the all-in-one CLI) with skopeo", () => {
  const work = tempDir("cli-serve");
  const id = randomBytes(3).toString("hex");
  let skopeo: SkopeoSandbox;
  let server: Background | undefined;
  let url = "";
  let host = "";
  let configPath = "";
  let img: TestImage;
  let firstKid = "";
  let service = "";

  async function start(): Promise<void> {
    const proc = startBackground(process.execPath, [BIN, "serve", configPath], {
      cwd: work.path,
      env: { REGISTRY_KIT_ADMIN_PASSWORD: admin.password, NODE_ENV: "production" },
    });
    server = proc;
    await waitFor(
      `registry-kit serve to answer ${url}/v2/`,
      async () => {
        if (proc.exited()) throw new Error(`registry-kit serve exited:\n${proc.output()}`);
        const res = await fetch(`${url}/v2/`);
        await res.arrayBuffer();
        return res.status === 401;
      },
      60_000,
      () => proc.output(),
    );
  }

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    host = `127.0.0.1:${port}`;
    configPath = join(work.path, "config.yml");
    writeFileSync(
      configPath,
      stringify({
        version: 0.1,
        log: { level: "info" },
        http: { addr: host },
        storage: { filesystem: { rootdirectory: join(work.path, "data", "registry") }, delete: { enabled: true } },
        registrykit: {
          keydirectory: join(work.path, "data", "keys"),
          tokenservice: { publicrepositories: [`public/*`] },
          users: { admin: { username: admin.username } },
        },
      }),
    );
    img = buildTestImage(join(work.path, "src"), { sizes: [4096, 150_000] });
    await start();
  });
  afterAll(async () => {
    await server?.stop();
    skopeo?.remove();
    work.remove();
  });

  const log = () => `--- registry-kit serve output ---\n${server?.output().slice(-8000)}`;

  it("challenges with its own token service, which issues kid-signed tokens", async () => {
    const res = await fetch(`${url}/v2/`);
    expect(res.status).toBe(401);
    const challenge = res.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(new RegExp(`^Bearer realm="${url}/service/token",service="[^"]+"$`));
    await res.arrayBuffer();
    service = /service="([^"]+)"/.exec(challenge)![1]!;
    const tokenRes = await fetch(`${url}/service/token?service=${encodeURIComponent(service)}&scope=repository:public/x:pull`);
    expect(tokenRes.status).toBe(200);
    const { token } = (await tokenRes.json()) as { token: string };
    firstKid = (JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()) as { kid: string }).kid;
    expect(firstKid).toMatch(/^([A-Z2-7]{4}:){11}[A-Z2-7]{4}$/);
  });

  it("an administrator creates carol through /api/users", async () => {
    const res = await fetch(`${url}/api/users`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString("base64")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ username: carol.username, email: "carol@example.test", password: carol.password }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
  });

  it("carol pushes to carol/* and pulls back identical digests; she cannot push to another namespace", async () => {
    const dest = `docker://${host}/carol/app-${id}:v1`;
    const push = await skopeo.copy(img.ref, dest, { destCreds: carol });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    expect((await skopeo.inspectRaw(dest, { creds: carol })).equals(img.manifestBytes)).toBe(true);
    const back = join(work.path, "carol-back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: carol });
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(name);

    const other = await skopeo.copy(img.ref, `docker://${host}/dave/app-${id}:v1`, { destCreds: carol });
    expect(other.code, describeRun(other)).not.toBe(0);
    expect(other.stderr).toContain("denied: requested access to the resource is denied");
  });

  it("anonymous pull works for the configured public repository and fails for carol's", async () => {
    const pub = `docker://${host}/public/app-${id}:v1`;
    const push = await skopeo.copy(img.ref, pub, { destCreds: admin });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    const ok = await skopeo.copy(pub, `oci:${join(work.path, "anon-back")}:v1`, { srcNoCreds: true });
    expect(ok.code, describeRun(ok)).toBe(0);
    expect(readOciLayout(join(work.path, "anon-back"), "v1").manifestDigest).toBe(img.manifestDigest);
    const no = await skopeo.copy(`docker://${host}/carol/app-${id}:v1`, `oci:${join(work.path, "anon-no")}:v1`, { srcNoCreds: true });
    expect(no.code, describeRun(no)).not.toBe(0);
    expect(no.stderr).toContain("denied: requested access to the resource is denied");
  });

  it("carol deletes in her own namespace with skopeo delete (storage.delete.enabled; skopeo asks for :*, then for the challenge's :delete)", async () => {
    const doomed = buildTestImage(join(work.path, "doomed"), { layers: 1 });
    const ref = `docker://${host}/carol/doomed-${id}:v1`;
    const push = await skopeo.copy(doomed.ref, ref, { destCreds: carol });
    expect(push.code, describeRun(push)).toBe(0);
    const del = await skopeo.raw(["delete", "--tls-verify=false", "--creds", `${carol.username}:${carol.password}`, ref]);
    expect(del.code, `${describeRun(del)}\n${log()}`).toBe(0);
    const gone = await skopeo.inspect(`docker://${host}/carol/doomed-${id}@${doomed.manifestDigest}`, { creds: carol });
    expect(gone.code, describeRun(gone)).not.toBe(0);
    expect(gone.stderr).toMatch(/manifest unknown/i);
  });

  it("survives a restart on the same data directory: images, users and the signing key persist", async () => {
    await server!.stop();
    expect(server!.exited()).toBe(true);
    await start();
    const tokenRes = await fetch(`${url}/service/token?service=${encodeURIComponent(service)}&scope=repository:public/x:pull`);
    expect(tokenRes.status).toBe(200);
    const { token } = (await tokenRes.json()) as { token: string };
    expect((JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()) as { kid: string }).kid).toBe(firstKid);
    const raw = await skopeo.inspectRaw(`docker://${host}/carol/app-${id}:v1`, { creds: carol });
    expect(raw.equals(img.manifestBytes), log()).toBe(true);
  });
});
