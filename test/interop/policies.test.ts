/**
 * Policies with real clients against `registry-kit serve` (token service and
 * users on): skopeo and podman pushing over an immutable tag are refused with
 * the policy's message printed; a push past a quota fails mid-push (a layer
 * went up, the next one is refused) and `registry-kit gc` then reclaims the
 * orphaned blob; a podman push whose layer alone is past the
 * quota is refused at that layer; what an immutable multi-arch tag holds (a
 * child manifest, a layer) cannot be deleted by skopeo or a `DELETE` with a
 * token, and the index still copies whole; `registry-kit users passwd` resets the
 * administrator's password and skopeo logs in with the new one.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { containersSandbox, type ContainersSandbox } from "./helpers/containers.js";
import { buildTestImage, buildTestIndex, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, run, tempDir, type Background } from "./helpers/process.js";
import { challenges, startOnConfig } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
const QUOTA = 200_000;

describe("write policies with skopeo and podman", () => {
  const work = tempDir("policies");
  const admin = { username: "admin", password: `Pw1-${randomBytes(9).toString("base64url")}` };
  let configPath = "";
  let skopeo: SkopeoSandbox;
  let containers: ContainersSandbox;
  let server: Background | undefined;
  let url = "";
  let host = "";
  let first: TestImage;
  let second: TestImage;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    containers = containersSandbox("policies");
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    host = `127.0.0.1:${port}`;
    configPath = join(work.path, "config.yml");
    writeFileSync(configPath, stringify({
      version: 0.1,
      log: { accesslog: { disabled: true } },
      http: { addr: host },
      storage: { filesystem: { rootdirectory: join(work.path, "data", "registry") }, delete: { enabled: true } },
      registrykit: {
        keydirectory: join(work.path, "data", "keys"),
        tokenservice: {},
        users: { admin: { password: admin.password } },
        policy: { immutabletags: ["v*"], quotas: { "small/*": QUOTA } },
      },
    }));
    first = buildTestImage(join(work.path, "first"), { sizes: [2048] });
    // Two layers that each fit the quota alone, but not together (random bytes do not compress).
    second = buildTestImage(join(work.path, "second"), { sizes: [120_000, 110_000] });
    server = await startOnConfig("registry-kit", configPath, work.path, challenges(`${url}/v2/`));
  });
  afterAll(async () => {
    await server?.stop();
    skopeo?.remove();
    containers?.remove();
    work.remove();
  });

  const log = () => `--- registry-kit serve output ---\n${server?.output().slice(-6000)}`;
  const cli = (args: string[], input?: string) => run(process.execPath, [BIN, ...args, configPath], { cwd: work.path, ...(input === undefined ? {} : { input }), timeoutMs: 60_000 });

  it("skopeo and podman cannot move an immutable tag; they print the policy's message", async () => {
    const v1 = `docker://${host}/team/app:v1`;
    const push = await skopeo.copy(first.ref, v1, { destCreds: admin });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    // The same image again is fine.
    expect((await skopeo.copy(first.ref, v1, { destCreds: admin })).code).toBe(0);
    const moved = await skopeo.copy(second.ref, v1, { destCreds: admin });
    expect(moved.code).not.toBe(0);
    expect(moved.stderr).toContain(`denied: tag v1 of team/app is immutable: it points at ${first.manifestDigest} and cannot be moved to ${second.manifestDigest}`);

    await containers.buildScratchImage("localhost/policies/other:latest", { "/hello.txt": `hello ${randomBytes(8).toString("hex")}\n` });
    const creds = `${admin.username}:${admin.password}`;
    const podman = await containers.podman(["push", "--tls-verify=false", "--creds", creds, "localhost/policies/other:latest", v1]);
    expect(podman.code).not.toBe(0);
    expect(podman.stderr).toMatch(new RegExp(`denied: tag v1 of team/app is immutable: it points at ${first.manifestDigest} and cannot be moved to sha256:[0-9a-f]{64}`));
    const tags = await skopeo.raw(["list-tags", "--tls-verify=false", "--creds", creds, `docker://${host}/team/app`]);
    expect(JSON.parse(tags.stdout).Tags).toEqual(["v1"]);
    const pulled = await skopeo.inspectRaw(`docker://${host}/team/app:v1`, { creds: admin });
    expect(pulled.equals(first.manifestBytes)).toBe(true);
  });

  it("skopeo copy --all of an index under an immutable tag: its child manifests and layers cannot be deleted, it copies back whole", async () => {
    const index = buildTestIndex(join(work.path, "index-src"), { archs: ["amd64", "arm64"] });
    const dest = `docker://${host}/team/multi:v2`;
    const push = await skopeo.copy(index.ref, dest, { destCreds: admin, extraArgs: ["--all"] });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    const child = index.images[1]!.image;
    const deleted = await skopeo.raw(["delete", "--tls-verify=false", "--creds", `${admin.username}:${admin.password}`, `docker://${host}/team/multi@${child.manifestDigest}`]);
    expect(deleted.code).not.toBe(0);
    // skopeo delete prints the error body as it came (escaped) with the status.
    expect(deleted.stderr).toContain(`DENIED\\",\\"message\\":\\"manifest ${child.manifestDigest} cannot be deleted: the immutable tag v2 of team/multi (${index.indexDigest}) references it`);
    expect(deleted.stderr).toContain("(403 Forbidden)");
    // A blob DELETE with a token the token service grants the administrator.
    const layer = child.layers[0]!.digest;
    const blobUrl = `${url}/v2/team/multi/blobs/${layer}`;
    const challenge = await fetch(blobUrl, { method: "DELETE" });
    expect(challenge.status).toBe(401);
    const params = Object.fromEntries([...(challenge.headers.get("www-authenticate") ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const tokenUrl = `${params.realm}?service=${encodeURIComponent(params.service ?? "")}&scope=${encodeURIComponent(params.scope ?? "")}`;
    const basic = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString("base64")}`;
    const { token } = (await (await fetch(tokenUrl, { headers: { authorization: basic } })).json()) as { token: string };
    const refused = await fetch(blobUrl, { method: "DELETE", headers: { authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { errors: { code: string; message: string }[] }).errors[0]).toMatchObject({
      code: "DENIED", message: `blob ${layer} cannot be deleted: the immutable tag v2 of team/multi (${index.indexDigest}) references it`,
    });
    const back = await skopeo.copy(dest, `oci:${join(work.path, "index-back")}:v2`, { srcCreds: admin, extraArgs: ["--all"] });
    expect(back.code, describeRun(back)).toBe(0);
  });

  it("a push past the quota fails at the layer that does not fit, with usage and limit printed; gc reclaims the layer let in", async () => {
    const push = await skopeo.copy(second.ref, `docker://${host}/small/big:latest`, { destCreds: admin });
    expect(push.code).not.toBe(0);
    // Uploaded layers count before their manifest: the second of the two (in whichever order skopeo sends them) is refused.
    expect(push.stderr).toMatch(/denied: quota exceeded for small\/\*: this blob adds 1\d\d\.\d KiB to 1\d\d\.\d KiB used of 195\.3 KiB/);
    const admin64 = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString("base64")}`;
    const quotas = async () => ((await (await fetch(`${url}/api/quotas`, { headers: { authorization: admin64 } })).json()) as { quotas: { namespace: string; used: number; blobs: number }[] }).quotas;
    const [usage] = await quotas();
    expect(usage).toMatchObject({ namespace: "small/*", limit: QUOTA, repositories: 0 });
    expect(usage!.used).toBeGreaterThan(100_000);
    expect(usage!.used).toBeLessThanOrEqual(QUOTA);
    const gc = await cli(["gc", "--grace-period=0"]);
    expect(gc.code, describeRun(gc)).toBe(0);
    // (The first test's refused push left these layers in team/app too: both go.)
    for (const layer of second.layers) expect(gc.stdout).toContain(`removed blob ${layer.digest}`);
    expect(await quotas()).toEqual([{ namespace: "small/*", limit: QUOTA, used: 0, blobs: 0, repositories: 0 }]);
  });

  it("podman's push of a layer alone past the quota is refused at that layer", async () => {
    await containers.buildScratchImage("localhost/policies/huge:latest", { "/blob.bin": randomBytes(300_000).toString("base64") });
    const creds = `${admin.username}:${admin.password}`;
    const push = await containers.podman(["push", "--tls-verify=false", "--creds", creds, "localhost/policies/huge:latest", `docker://${host}/small/huge:v1`]);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toMatch(/denied: quota exceeded for small\/\*: this blob adds 3\d\d\.\d KiB to 0 B used of 195\.3 KiB/);
  });

  it("registry-kit users passwd resets the administrator's password; skopeo logs in with it, not with the old one", async () => {
    const fresh = `Pw2-${randomBytes(9).toString("base64url")}`;
    const reset = await cli(["users", "passwd", "admin"], `${fresh}\n`);
    expect(reset.code, describeRun(reset)).toBe(0);
    expect(reset.stdout).toBe("password of admin changed\n");
    const login = (password: string) => skopeo.raw(["login", "--tls-verify=false", "--authfile", skopeo.authfile, "-u", "admin", "-p", password, host]);
    const old = await login(admin.password);
    expect(old.code).not.toBe(0);
    expect(old.stderr).toContain("invalid username/password");
    const ok = await login(fresh);
    expect(ok.code, describeRun(ok)).toBe(0);
    expect(ok.stdout).toContain("Login Succeeded!");
  });
});
