/**
 * Issue "Adapters, the all-in-one server…", done-when: `registry-kit serve
 * config.yml` with a Distribution config whose `auth.token` points at an
 * external token service verifies that service's tokens.
 *
 * The external service is registry-kit's token service run standalone on
 * another loopback port (helpers/token-service.ts: its own generated key,
 * in-memory users, an ACL policy, its certificate written to a file), once
 * signing kid-only tokens and once with `x5c`. The registry is the real CLI
 * (`node bin/registry-kit.mjs serve config.yml`) with `auth.token` = {realm,
 * service, issuer, rootcertbundle} of that service and no `registrykit`
 * token service or users API. skopeo pushes and pulls through it with the
 * external service's tokens; a pull-only user is denied push; a token with
 * the right claims but signed by another key is refused (401,
 * `error="invalid_token"`) while a genuine one for the same scope works.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { generatedKeys, signJwt } from "../../src/auth/index.js";
import { requestToken, startAllInOne, type AllInOneProcess } from "./helpers/all-in-one.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, tempDir } from "./helpers/process.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";
import { dumpIssued, startTokenService, type TokenServiceFixture } from "./helpers/token-service.js";

const alice = { username: "alice", password: "alice-External-1" };
const puller = { username: "puller", password: "puller-External-2" };
const MANIFEST_V2 = "application/vnd.oci.image.manifest.v1+json";

for (const variant of [{ name: "kid-only", x5c: false }, { name: "x5c", x5c: true }] as const) {
  describe(`registry-kit serve config.yml with auth.token → an external token service (${variant.name} tokens)`, () => {
    const work = tempDir(`external-token-${variant.name}`);
    const id = randomBytes(3).toString("hex");
    const repo = `alice/ext-${variant.name}-${id}`;
    let tokens: TokenServiceFixture;
    let server: AllInOneProcess | undefined;
    let skopeo: SkopeoSandbox;
    let img: TestImage;

    beforeAll(async () => {
      skopeo = skopeoSandbox();
      img = buildTestImage(join(work.path, "src"), { sizes: [3000, 60_000] });
      tokens = await startTokenService({
        users: { alice: { password: alice.password }, puller: { password: puller.password } },
        rules: [
          { match: { account: "alice", type: "repository", name: "alice/*" }, actions: ["*"] },
          { match: { account: "puller", type: "repository", name: "alice/*" }, actions: ["pull"] },
        ],
        x5c: variant.x5c,
        service: "registry.external.test",
        issuer: "external-token-issuer",
      });
      const configPath = join(work.path, "config.yml");
      writeFileSync(
        configPath,
        stringify({
          version: 0.1,
          log: { level: "info" },
          http: { addr: `127.0.0.1:${await freePort()}` },
          storage: { filesystem: { rootdirectory: join(work.path, "data", "registry") } },
          auth: { token: { realm: tokens.realm, service: tokens.service, issuer: tokens.issuer, rootcertbundle: tokens.rootCertBundle } },
          registrykit: { keydirectory: join(work.path, "data", "keys") },
        }),
      );
      server = await startAllInOne({ configPath, cwd: work.path });
    });
    afterAll(async () => {
      await server?.stop();
      await tokens?.close();
      skopeo?.remove();
      work.remove();
    });

    const log = () => `${server!.log()}\n--- tokens issued ---\n${dumpIssued(tokens.issued)}`;

    it("runs as a registry only, challenging with the external realm", async () => {
      const out = server!.proc.output();
      expect(out).toContain(`  auth            token, realm ${tokens.realm} (service "${tokens.service}", issuer "${tokens.issuer}")`);
      expect(out).toContain(`external token service; trusting ${tokens.rootCertBundle}`);
      expect(out).not.toContain("  token service   ");
      expect(out).not.toContain("  users API       ");
      const res = await fetch(`${server!.url}/v2/`);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="${tokens.realm}",service="${tokens.service}"`);
      expect((await fetch(`${server!.url}/service/token`)).status).toBe(404);
    });

    it("skopeo pushes and pulls back identical digests with the external service's tokens", async () => {
      const dest = `docker://${server!.host}/${repo}:v1`;
      const push = await skopeo.copy(img.ref, dest, { destCreds: alice });
      expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
      expect((await skopeo.inspectRaw(dest, { creds: alice })).equals(img.manifestBytes)).toBe(true);
      const back = join(work.path, "back");
      const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: puller });
      expect(pull.code, `${describeRun(pull)}\n${log()}`).toBe(0);
      const got = readOciLayout(back, "v1");
      expect(got.manifestDigest).toBe(img.manifestDigest);
      expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));

      // the tokens skopeo used really were the external service's, in this variant's form
      const used = tokens.issued.filter((t) => t.status === 200 && t.claims?.sub === "alice");
      expect(used.length, log()).toBeGreaterThan(0);
      for (const t of used) {
        expect(t.header?.alg).toBe("RS256");
        expect(t.header?.kid).toMatch(/^([A-Z2-7]{4}:){11}[A-Z2-7]{4}$/);
        expect(Boolean(t.header?.x5c), log()).toBe(variant.x5c);
        expect(t.claims).toMatchObject({ iss: tokens.issuer, aud: tokens.service });
      }
    });

    it("a pull-only user's push is denied", async () => {
      const other = buildTestImage(join(work.path, "denied"), { layers: 1 });
      const push = await skopeo.copy(other.ref, `docker://${server!.host}/${repo}:puller`, { destCreds: puller });
      expect(push.code, describeRun(push)).not.toBe(0);
      expect(push.stderr).toContain("denied: requested access to the resource is denied");
    });

    it("a token with the right claims signed by another key is refused with invalid_token; the genuine one works", async () => {
      const scope = `repository:${repo}:pull`;
      const path = `/v2/${repo}/manifests/v1`;
      const genuine = await requestToken(tokens.url, { service: tokens.service, scope, creds: alice });
      expect(genuine.status).toBe(200);
      const ok = await fetch(`${server!.url}${path}`, { headers: { authorization: `Bearer ${genuine.token}`, accept: MANIFEST_V2 } });
      expect(ok.status).toBe(200);
      expect(Buffer.from(await ok.arrayBuffer()).equals(img.manifestBytes)).toBe(true);

      const claims = JSON.parse(Buffer.from(genuine.token!.split(".")[1]!, "base64url").toString()) as object;
      const foreign = await signJwt(claims, await generatedKeys().signingKey(), { x5c: variant.x5c });
      const res = await fetch(`${server!.url}${path}`, { headers: { authorization: `Bearer ${foreign}`, accept: MANIFEST_V2 } });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(res.headers.get("www-authenticate")).toContain(`realm="${tokens.realm}"`);
      expect(((await res.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe("UNAUTHORIZED");
    });
  });
}
