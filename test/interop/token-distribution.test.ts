/**
 * registry-kit's tokens are accepted by the reference registry: Debian's
 * docker-registry (CNCF Distribution 2.8) configured with `auth.token` whose
 * realm is registry-kit's token service (on another loopback port) and whose
 * rootcertbundle is the self-signed certificate written by registry-kit's
 * generated key provider. skopeo pushes and pulls through Distribution.
 *
 * Run twice: with kid-only tokens (`x5c: false`; Distribution 2.8 looks the
 * key up by its libtrust kid in the bundle) and with `x5c` tokens
 * (Distribution 2.8 then verifies the certificate chain against the bundle
 * and ignores the kid), so both of Distribution's key paths accept our
 * tokens.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDistribution, type Distribution } from "./helpers/distribution.js";
import { buildTestImage, readOciLayout } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";
import { dumpIssued, startTokenService, type TokenServiceFixture } from "./helpers/token-service.js";

const alice = { username: "alice", password: "alice-Secret-1" };
const puller = { username: "puller", password: "puller-Secret-2" };
const LIBTRUST_KID = /^([A-Z2-7]{4}:){11}[A-Z2-7]{4}$/;

for (const x5c of [false, true]) {
  describe(`Distribution 2.8 accepts registry-kit tokens (${x5c ? "x5c chain + kid" : "kid only, no x5c"})`, () => {
    let tokens: TokenServiceFixture;
    let dist: Distribution;
    let skopeo: SkopeoSandbox;
    const work = tempDir("token-dist");
    const repo = `alice/dist-${x5c ? "x5c" : "kid"}-${randomBytes(3).toString("hex")}`;

    beforeAll(async () => {
      skopeo = skopeoSandbox();
      tokens = await startTokenService({
        users: { alice: { password: alice.password }, puller: { password: puller.password } },
        rules: [
          { match: { account: "alice", type: "repository", name: "alice/*" }, actions: ["*"] },
          { match: { account: "puller", type: "repository", name: "alice/*" }, actions: ["pull"] },
        ],
        x5c,
      });
      dist = await startDistribution({
        auth: { realm: tokens.realm, service: tokens.service, issuer: tokens.issuer, rootcertbundle: tokens.rootCertBundle },
      });
    });
    afterAll(async () => {
      await dist?.stop();
      await tokens?.close();
      skopeo?.remove();
      work.remove();
    });

    const log = () => `--- tokens ---\n${dumpIssued(tokens.issued)}\n--- distribution log (tail) ---\n${dist.log().slice(-6000)}`;

    it("Distribution challenges with registry-kit's realm", async () => {
      const res = await fetch(`${dist.url}/v2/`);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="${tokens.realm}",service="${tokens.service}"`);
      await res.arrayBuffer();
    });

    it("skopeo pushes with alice's registry-kit token and pulls back (as puller) with identical digests", async () => {
      const img = buildTestImage(join(work.path, "src"), { sizes: [4096, 120_000] });
      const dest = `docker://${dist.host}/${repo}:v1`;
      const push = await skopeo.copy(img.ref, dest, { destCreds: alice });
      expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);

      // The tokens Distribution accepted have the shape under test.
      const used = tokens.issued.filter((t) => t.claims);
      expect(used.length, log()).toBeGreaterThan(0);
      for (const t of used) {
        expect(t.header!.alg).toBe("RS256");
        expect(t.header!.kid).toMatch(LIBTRUST_KID);
        if (x5c) expect(t.header!.x5c?.length).toBeGreaterThan(0);
        else expect(t.header!.x5c).toBeUndefined();
      }
      expect(dist.log()).not.toContain("invalid_token");
      const manifestPut = dist.requests().find((r) => r.method === "PUT" && r.path === `/v2/${repo}/manifests/v1`);
      expect(manifestPut?.status, log()).toBe(201);

      expect((await skopeo.inspectRaw(dest, { creds: alice })).equals(img.manifestBytes)).toBe(true);

      const back = join(work.path, "back");
      const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: puller });
      expect(pull.code, `${describeRun(pull)}\n${log()}`).toBe(0);
      const got = readOciLayout(back, "v1");
      expect(got.manifestDigest).toBe(img.manifestDigest);
      expect(got.configDigest).toBe(img.config.digest);
      expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
      for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(name);
    });

    it("a pull-only registry-kit token is refused for push by Distribution (insufficient_scope → 'denied')", async () => {
      const img = buildTestImage(join(work.path, "denied-src"), { layers: 1 });
      const push = await skopeo.copy(img.ref, `docker://${dist.host}/${repo}:puller`, { destCreds: puller });
      expect(push.code, `${describeRun(push)}\n${log()}`).not.toBe(0);
      expect(push.stderr).toContain("denied: requested access to the resource is denied");
    });

    it("skopeo delete: refused for puller with Distribution's 401 body, done for alice with a registry-kit token holding delete", async () => {
      const img = buildTestImage(join(work.path, "doomed"), { layers: 1 });
      const ref = `docker://${dist.host}/${repo}:doomed`;
      expect((await skopeo.copy(img.ref, ref, { destCreds: alice })).code).toBe(0);
      const byPuller = await skopeo.raw(["delete", "--tls-verify=false", "--creds", `${puller.username}:${puller.password}`, ref]);
      expect(byPuller.code, `${describeRun(byPuller)}\n${log()}`).not.toBe(0);
      expect(byPuller.stderr).toContain("(401 Unauthorized)");
      expect(byPuller.stderr).toContain(
        `{\\"errors\\":[{\\"code\\":\\"UNAUTHORIZED\\",\\"message\\":\\"authentication required\\",\\"detail\\":[{\\"Type\\":\\"repository\\",\\"Class\\":\\"\\",\\"Name\\":\\"${repo}\\",\\"Action\\":\\"delete\\"}]}]}`,
      );
      const byAlice = await skopeo.raw(["delete", "--tls-verify=false", "--creds", `${alice.username}:${alice.password}`, ref]);
      expect(byAlice.code, `${describeRun(byAlice)}\n${log()}`).toBe(0);
      const gone = await skopeo.inspect(`docker://${dist.host}/${repo}@${img.manifestDigest}`, { creds: alice });
      expect(gone.code, describeRun(gone)).not.toBe(0);
      expect(gone.stderr).toMatch(/manifest unknown/i);
    });
  });
}
