/**
 * podman 4.3 and buildah 1.28 through registry-kit's token flow (registry-kit
 * registry with the token authorizer + registry-kit token service).
 *
 * Proves: `podman login` stores the login in the (isolated) auth file and
 * later pushes use it — the spec's "stored client login"; buildah pushes with
 * `--creds`; podman pulls as a pull-only user with the same manifest digest;
 * the pull-only user's push fails with "requested access to the resource is
 * denied"; an anonymous pull of a private repository fails, of a public one
 * works; `podman logout` forgets the login.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenAuthorizer } from "../../src/auth/index.js";
import { containersSandbox, type ContainersSandbox } from "./helpers/containers.js";
import { describeRun } from "./helpers/process.js";
import { startRegistryKit, type RegistryKit } from "./helpers/registry-kit.js";
import { dumpIssued, startTokenService, type TokenServiceFixture } from "./helpers/token-service.js";

const alice = { username: "alice", password: "alice-Secret-1" };
const puller = { username: "puller", password: "puller-Secret-2" };

interface PodmanImage {
  Id: string;
  Digest: string;
}

describe("podman and buildah through registry-kit's token flow", () => {
  let tokens: TokenServiceFixture;
  let reg: RegistryKit;
  let builder: ContainersSandbox;
  let puller1: ContainersSandbox;
  const id = randomBytes(3).toString("hex");
  const privateRepo = `alice/podman-${id}`;
  const publicRepo = `public/podman-${id}`;
  let imageId = "";
  let pushedDigest = "";

  beforeAll(async () => {
    builder = containersSandbox("token-buildah");
    puller1 = containersSandbox("token-podman");
    tokens = await startTokenService({
      users: { alice: { password: alice.password }, puller: { password: puller.password } },
      rules: [
        { match: { account: "alice", type: "repository", name: "alice/*" }, actions: ["*"] },
        { match: { account: "alice", type: "repository", name: "public/*" }, actions: ["*"] },
        { match: { account: "puller", type: "repository", name: "alice/*" }, actions: ["pull"] },
        { match: { type: "repository", name: "public/*" }, actions: ["pull"] },
      ],
    });
    reg = await startRegistryKit({
      authorize: createTokenAuthorizer({
        realm: tokens.realm,
        service: tokens.service,
        issuer: tokens.issuer,
        rootCertBundle: (await tokens.keys.exportPem()).certificate,
      }),
    });
  });
  afterAll(async () => {
    await reg?.close();
    await tokens?.close();
    builder?.remove();
    puller1?.remove();
  });

  const log = () => `--- registry saw ---\n${reg.recorder.dump()}\n--- tokens ---\n${dumpIssued(tokens.issued)}`;

  it("podman login stores alice's login; buildah pushes with it (no --creds)", async () => {
    const local = `localhost/${privateRepo}:v1`;
    imageId = await builder.buildScratchImage(local, { "/hello.txt": `hello ${id}\n` });

    // a wrong password is refused at login
    const bad = await builder.podman(["login", "--tls-verify=false", "-u", alice.username, "-p", "wrong-password", reg.host]);
    expect(bad.code, describeRun(bad)).not.toBe(0);
    expect(bad.stderr).toContain("invalid username/password");

    const login = await builder.podman(["login", "--tls-verify=false", "-u", alice.username, "-p", alice.password, reg.host]);
    expect(login.code, `${describeRun(login)}\n${log()}`).toBe(0);
    expect(login.stdout).toContain("Login Succeeded");
    const stored = JSON.parse(readFileSync(builder.authfile, "utf8")) as { auths: Record<string, { auth: string }> };
    expect(Buffer.from(stored.auths[reg.host]!.auth, "base64").toString()).toBe(`${alice.username}:${alice.password}`);

    const digestFile = join(builder.dir, "pushed.digest");
    const push = await builder.buildah(["push", "--tls-verify=false", "--digestfile", digestFile, local, `docker://${reg.host}/${privateRepo}:v1`]);
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    pushedDigest = readFileSync(digestFile, "utf8").trim();
    const pushToken = tokens.issued.find((t) => t.claims?.access.some((a) => a.name === privateRepo && a.actions.includes("push")));
    expect(pushToken?.claims?.sub, log()).toBe("alice");

    // also publish it in the public namespace
    const pub = await builder.buildah(["push", "--tls-verify=false", local, `docker://${reg.host}/${publicRepo}:v1`]);
    expect(pub.code, `${describeRun(pub)}\n${log()}`).toBe(0);

    const logout = await builder.podman(["logout", reg.host]);
    expect(logout.code, describeRun(logout)).toBe(0);
    const after = JSON.parse(readFileSync(builder.authfile, "utf8")) as { auths: Record<string, unknown> };
    expect(after.auths[reg.host]).toBeUndefined();
  });

  it("podman pulls as puller (--creds) with the pushed manifest digest", async () => {
    const ref = `${reg.host}/${privateRepo}:v1`;
    const pull = await puller1.podman(["pull", "--tls-verify=false", "--creds", `${puller.username}:${puller.password}`, ref]);
    expect(pull.code, `${describeRun(pull)}\n${log()}`).toBe(0);
    expect(pull.stdout.trim()).toBe(imageId);
    const inspect = await puller1.podman(["image", "inspect", ref]);
    const [info] = JSON.parse(inspect.stdout) as PodmanImage[];
    expect(info!.Digest).toBe(pushedDigest);
  });

  it("puller's podman push is denied", async () => {
    const ref = `${reg.host}/${privateRepo}:v1`;
    const push = await puller1.podman(["push", "--tls-verify=false", "--creds", `${puller.username}:${puller.password}`, ref, `docker://${reg.host}/${privateRepo}:puller`]);
    expect(push.code, `${describeRun(push)}\n${log()}`).not.toBe(0);
    expect(push.stderr).toContain("requested access to the resource is denied");
  });

  it("anonymous podman pull: the public repository works, the private one is denied", async () => {
    const anon = containersSandbox("token-anon");
    try {
      const ok = await anon.podman(["pull", "--tls-verify=false", `${reg.host}/${publicRepo}:v1`]);
      expect(ok.code, `${describeRun(ok)}\n${log()}`).toBe(0);
      expect(ok.stdout.trim()).toBe(imageId);
      const no = await anon.podman(["pull", "--tls-verify=false", `${reg.host}/${privateRepo}:v1`]);
      expect(no.code, `${describeRun(no)}\n${log()}`).not.toBe(0);
      expect(no.stderr).toContain("requested access to the resource is denied");
    } finally {
      anon.remove();
    }
  });

  it("no request got a 5xx", () => {
    expect(reg.recorder.requests.filter((r) => r.status >= 500 || r.status < 0), log()).toEqual([]);
    expect(tokens.recorder.requests.filter((r) => r.status >= 500 || r.status < 0), log()).toEqual([]);
  });
});
