/**
 * registry-kit as the auth server of an existing CNCF Distribution: the
 * all-in-one `registry-kit serve` (its own process; token service + users
 * API) issues the tokens, and Debian's docker-registry 2.8 is configured with
 * `auth.token` pointing at it — realm `<registry-kit>/service/token`, service
 * and issuer `registry-kit` (the CLI's defaults), and `rootcertbundle` = the
 * certificate file the CLI wrote into its key directory on first start.
 *
 * skopeo, with a user created through /api/users, pushes to their namespace
 * on Distribution and pulls back identical digests; their push elsewhere is
 * denied; anonymous pulls follow `publicrepositories`.
 */
import { randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startDistribution, type Distribution } from "./helpers/distribution.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, startBackground, tempDir, waitFor, type Background } from "./helpers/process.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
const admin = { username: "admin", password: "Adm1n-Interop-Pass" };
const erin = { username: "erin", password: "Er1n-Interop-Pass!" };

describe("registry-kit serve as the token service of Distribution 2.8", () => {
  const work = tempDir("cli-for-dist");
  const id = randomBytes(3).toString("hex");
  let rk: Background | undefined;
  let rkUrl = "";
  let dist: Distribution;
  let skopeo: SkopeoSandbox;
  let img: TestImage;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    const port = await freePort();
    rkUrl = `http://127.0.0.1:${port}`;
    const keyDir = join(work.path, "keys");
    const configPath = join(work.path, "registry-kit.yml");
    writeFileSync(
      configPath,
      stringify({
        version: 0.1,
        http: { addr: `127.0.0.1:${port}` },
        storage: { filesystem: { rootdirectory: join(work.path, "rk-registry") } },
        registrykit: {
          keydirectory: keyDir,
          tokenservice: { publicrepositories: ["public/*"] },
          users: { admin: { username: admin.username } },
        },
      }),
    );
    const proc = startBackground(process.execPath, [BIN, "serve", configPath], {
      cwd: work.path,
      env: { REGISTRY_KIT_ADMIN_PASSWORD: admin.password },
    });
    rk = proc;
    await waitFor(
      `registry-kit serve at ${rkUrl}`,
      async () => {
        if (proc.exited()) throw new Error(`registry-kit serve exited:\n${proc.output()}`);
        const res = await fetch(`${rkUrl}/v2/`);
        await res.arrayBuffer();
        return res.status === 401;
      },
      60_000,
      () => proc.output(),
    );
    const certFile = join(keyDir, "token-signing-cert.pem");
    expect(existsSync(certFile), `no certificate in ${keyDir}\n${proc.output()}`).toBe(true);

    dist = await startDistribution({
      auth: { realm: `${rkUrl}/service/token`, service: "registry-kit", issuer: "registry-kit", rootcertbundle: certFile },
    });

    const created = await fetch(`${rkUrl}/api/users`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString("base64")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ username: erin.username, email: "erin@example.test", password: erin.password }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    img = buildTestImage(join(work.path, "src"), { sizes: [4096, 80_000] });
  });
  afterAll(async () => {
    await dist?.stop();
    await rk?.stop();
    skopeo?.remove();
    work.remove();
  });

  const log = () =>
    `--- registry-kit serve ---\n${rk?.output().slice(-5000)}\n--- distribution (tail) ---\n${dist.log().slice(-5000)}`;

  it("erin pushes to erin/* on Distribution with a registry-kit token and pulls back identical digests", async () => {
    const dest = `docker://${dist.host}/erin/app-${id}:v1`;
    const push = await skopeo.copy(img.ref, dest, { destCreds: erin });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    expect((await skopeo.inspectRaw(dest, { creds: erin })).equals(img.manifestBytes)).toBe(true);
    const back = join(work.path, "back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: erin });
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    for (const [digest, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(digest);
    // the token requests reached registry-kit's token service
    expect(rk!.output()).toMatch(/GET \/service\/token\?account=erin/);
  });

  it("erin's push outside her namespace is denied by Distribution", async () => {
    const push = await skopeo.copy(img.ref, `docker://${dist.host}/frank/app-${id}:v1`, { destCreds: erin });
    expect(push.code, `${describeRun(push)}\n${log()}`).not.toBe(0);
    expect(push.stderr).toContain("denied: requested access to the resource is denied");
  });

  it("anonymous pulls follow registry-kit's publicrepositories", async () => {
    const pub = `docker://${dist.host}/public/app-${id}:v1`;
    const push = await skopeo.copy(img.ref, pub, { destCreds: admin });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    const ok = await skopeo.copy(pub, `oci:${join(work.path, "anon")}:v1`, { srcNoCreds: true });
    expect(ok.code, `${describeRun(ok)}\n${log()}`).toBe(0);
    expect(readOciLayout(join(work.path, "anon"), "v1").manifestDigest).toBe(img.manifestDigest);
    const no = await skopeo.copy(`docker://${dist.host}/erin/app-${id}:v1`, `oci:${join(work.path, "anon-no")}:v1`, { srcNoCreds: true });
    expect(no.code, describeRun(no)).not.toBe(0);
    expect(no.stderr).toContain("denied: requested access to the resource is denied");
  });
});
