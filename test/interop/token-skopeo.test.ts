/**
 * Issue 3 acceptance: skopeo 1.9.3 through registry-kit's whole token flow —
 * registry-kit's registry (token authorizer) and registry-kit's token service
 * (in-memory users, ACL policy), each on its own loopback port.
 *
 * Users: alice has every right in alice/* and may publish to public/*;
 * puller may only pull alice/*; anyone (anonymous included) may pull
 * public/*.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenAuthorizer } from "../../src/auth/index.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { startRegistryKit, type RegistryKit } from "./helpers/registry-kit.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";
import { dumpIssued, startTokenService, type TokenServiceFixture } from "./helpers/token-service.js";

const alice = { username: "alice", password: "alice-Secret-1" };
const puller = { username: "puller", password: "puller-Secret-2" };

describe("skopeo through registry-kit's token flow (registry-kit registry + registry-kit token service)", () => {
  let tokens: TokenServiceFixture;
  let reg: RegistryKit;
  let skopeo: SkopeoSandbox;
  let img: TestImage;
  const work = tempDir("token-skopeo");
  const id = randomBytes(3).toString("hex");
  const privateRepo = `alice/app-${id}`;
  const publicRepo = `public/app-${id}`;
  const otherPrivate = `alice/secret-${id}`;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
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
    img = buildTestImage(join(work.path, "src"), { sizes: [4096, 200_000] });
  });
  afterAll(async () => {
    await reg?.close();
    await tokens?.close();
    skopeo?.remove();
    work.remove();
  });

  const log = () => `--- registry saw ---\n${reg.recorder.dump()}\n--- tokens ---\n${dumpIssued(tokens.issued)}`;

  it("answers an anonymous GET /v2/ with the Bearer challenge naming registry-kit's token service", async () => {
    const res = await fetch(`${reg.url}/v2/`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="${tokens.realm}",service="${tokens.service}"`);
    await res.arrayBuffer();
  });

  it("alice pushes to alice/* with her credentials and pulls back identical digests", async () => {
    const dest = `docker://${reg.host}/${privateRepo}:v1`;
    const push = await skopeo.copy(img.ref, dest, { destCreds: alice });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    // skopeo asked the token service with GET + Basic and got pull,push on the repository.
    const pushToken = tokens.issued.find((t) => t.claims?.access.some((a) => a.name === privateRepo && a.actions.includes("push")));
    expect(pushToken, dumpIssued(tokens.issued)).toBeDefined();
    expect(pushToken!.auth).toBe("Basic");
    expect(pushToken!.claims!.sub).toBe("alice");
    expect(pushToken!.claims!.aud).toBe(tokens.service);
    expect(pushToken!.header!.alg).toBe("RS256");
    // every registry request after the first challenge carried a Bearer token
    expect(reg.recorder.requests.filter((r) => r.method !== "GET" || r.path !== "/v2/").every((r) => r.auth === "Bearer"), log()).toBe(true);

    expect((await skopeo.inspectRaw(dest, { creds: alice })).equals(img.manifestBytes)).toBe(true);
    const back = join(work.path, "alice-back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: alice });
    expect(pull.code, `${describeRun(pull)}\n${log()}`).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.configDigest).toBe(img.config.digest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(name);
  });

  it("puller may pull alice's repository", async () => {
    const back = join(work.path, "puller-back");
    const pull = await skopeo.copy(`docker://${reg.host}/${privateRepo}:v1`, `oci:${back}:v1`, { srcCreds: puller });
    expect(pull.code, `${describeRun(pull)}\n${log()}`).toBe(0);
    expect(readOciLayout(back, "v1").manifestDigest).toBe(img.manifestDigest);
  });

  it("puller's push is refused: skopeo fails with 'denied: requested access to the resource is denied'", async () => {
    const other = buildTestImage(join(work.path, "puller-src"), { layers: 1 });
    reg.recorder.clear();
    const push = await skopeo.copy(other.ref, `docker://${reg.host}/${privateRepo}:puller`, { destCreds: puller });
    expect(push.code, `${describeRun(push)}\n${log()}`).not.toBe(0);
    expect(push.stderr).toContain("denied: requested access to the resource is denied");
    // the refusal is the Distribution-style 401 insufficient_scope challenge, not a 5xx
    const refused = reg.recorder.requests.filter((r) => r.status === 401 && r.challenge?.includes('error="insufficient_scope"'));
    expect(refused.length, log()).toBeGreaterThan(0);
    expect(reg.recorder.requests.filter((r) => r.status >= 500), log()).toEqual([]);
    // and nothing was tagged
    const check = await skopeo.inspect(`docker://${reg.host}/${privateRepo}:puller`, { creds: alice });
    expect(check.code, describeRun(check)).not.toBe(0);
  });

  it("anonymous pull (--src-no-creds) of a public repository works", async () => {
    const pub = `docker://${reg.host}/${publicRepo}:v1`;
    const push = await skopeo.copy(img.ref, pub, { destCreds: alice });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    const before = tokens.issued.length;
    const back = join(work.path, "anon-back");
    const pull = await skopeo.copy(pub, `oci:${back}:v1`, { srcNoCreds: true });
    expect(pull.code, `${describeRun(pull)}\n${log()}`).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    const anon = tokens.issued.slice(before);
    expect(anon.length, dumpIssued(anon)).toBeGreaterThan(0);
    for (const t of anon) {
      expect(t.auth).toBeUndefined();
      expect(t.claims?.sub).toBe("");
    }
  });

  it("anonymous pull of a private repository fails", async () => {
    // make sure the repository exists, so the refusal is about rights, not a missing image
    const push = await skopeo.copy(img.ref, `docker://${reg.host}/${otherPrivate}:v1`, { destCreds: alice });
    expect(push.code, describeRun(push)).toBe(0);
    for (const repo of [privateRepo, otherPrivate]) {
      const back = join(work.path, `anon-private-${repo.replace(/\W/g, "_")}`);
      const pull = await skopeo.copy(`docker://${reg.host}/${repo}:v1`, `oci:${back}:v1`, { srcNoCreds: true });
      expect(pull.code, `${describeRun(pull)}\n${log()}`).not.toBe(0);
      expect(pull.stderr).toContain("denied: requested access to the resource is denied");
    }
  });

  it("a wrong password is refused by the token service with skopeo's 'invalid username/password'", async () => {
    const r = await skopeo.inspect(`docker://${reg.host}/${privateRepo}:v1`, { creds: { username: "alice", password: "wrong" } });
    expect(r.code, describeRun(r)).not.toBe(0);
    expect(r.stderr).toContain("invalid username/password");
  });

  it("skopeo delete: refused for puller (no delete right), done for alice (token with * / delete)", async () => {
    const doomed = buildTestImage(join(work.path, "doomed"), { layers: 1 });
    const ref = `docker://${reg.host}/${privateRepo}:doomed`;
    expect((await skopeo.copy(doomed.ref, ref, { destCreds: alice })).code).toBe(0);
    const byPuller = await skopeo.raw(["delete", "--tls-verify=false", "--creds", `${puller.username}:${puller.password}`, ref]);
    expect(byPuller.code, `${describeRun(byPuller)}\n${log()}`).not.toBe(0);
    // skopeo delete prints the raw 401 body (as it does for Distribution, see token-distribution.test.ts)
    expect(byPuller.stderr).toContain("(401 Unauthorized)");
    expect(byPuller.stderr).toContain(
      `{\\"errors\\":[{\\"code\\":\\"UNAUTHORIZED\\",\\"message\\":\\"authentication required\\",\\"detail\\":[{\\"Type\\":\\"repository\\",\\"Class\\":\\"\\",\\"Name\\":\\"${privateRepo}\\",\\"Action\\":\\"delete\\"}]}]}`,
    );
    const byAlice = await skopeo.raw(["delete", "--tls-verify=false", "--creds", `${alice.username}:${alice.password}`, ref]);
    expect(byAlice.code, `${describeRun(byAlice)}\n${log()}`).toBe(0);
    // skopeo delete asks for `repository:<name>:*`; alice's rule grants "*", which covers delete
    const deleteToken = tokens.issued.find(
      (t) => t.claims?.sub === "alice" && t.claims.access.some((a) => a.name === privateRepo && (a.actions.includes("delete") || a.actions.includes("*"))),
    );
    expect(deleteToken, dumpIssued(tokens.issued)).toBeDefined();
    const gone = await skopeo.inspect(`docker://${reg.host}/${privateRepo}@${doomed.manifestDigest}`, { creds: alice });
    expect(gone.code, describeRun(gone)).not.toBe(0);
    expect(gone.stderr).toMatch(/manifest unknown/i);
  });

  it("no request to either service got a 5xx", () => {
    expect(reg.recorder.requests.filter((r) => r.status >= 500 || r.status < 0), log()).toEqual([]);
    expect(tokens.recorder.requests.filter((r) => r.status >= 500 || r.status < 0), log()).toEqual([]);
  });
});
