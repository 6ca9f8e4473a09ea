/**
 * `auth.token.jwks` end to end (issue 17, item 7): one `registry-kit serve`
 * (the issuer) runs the token service and publishes its keys at
 * `/.well-known/jwks.json`; the JWKS is saved to a file, and a second
 * `registry-kit serve` trusts that file (no certificate bundle) for tokens of
 * the first one's token service. skopeo pushes and pulls through the second
 * with the token flow; `signingalgorithms` without the issuer's algorithm
 * refuses the same tokens; `autoredirect` sends clients to the realm on the
 * host they used; a broken JWKS file stops start-up with the reason.
 * Distribution 2.8 has no JWKS, so there is no side-by-side here.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, startBackground, tempDir, waitFor, type Background } from "./helpers/process.js";
import { startOnConfig, writeConfig } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";
import { BIN } from "./helpers/all-in-one.js";

const admin = { username: "admin", password: "Adm1n-Jwks-Interop!" };
const SERVICE = "jwks-registry";
const ISSUER = "jwks-issuer";

describe("registry-kit serve trusting the JWKS of another registry-kit's token service, with skopeo", () => {
  const work = tempDir("cli-serve-jwks");
  const running: Background[] = [];
  let skopeo: SkopeoSandbox;
  let img: TestImage;
  let issuerUrl = "";
  let jwksFile = "";
  let jwks: { keys: Array<{ kty: string; kid: string }> };

  /** Start `registry-kit serve` on `document` in `work/<label>`, ready when /v2/ answers. */
  async function serve(label: string, document: (port: number) => Record<string, unknown>): Promise<string> {
    const port = await freePort();
    const dir = join(work.path, label);
    mkdirSync(dir, { recursive: true });
    const config = writeConfig(dir, { version: 0.1, http: { addr: `127.0.0.1:${port}` }, ...document(port) });
    // Ready once /v2/ answers as configured (401: every server here has token auth), not 503 while starting.
    const ready = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/v2/`);
      await res.arrayBuffer();
      return res.status === 401;
    };
    running.push(await startOnConfig("registry-kit", config, dir, ready));
    return `127.0.0.1:${port}`;
  }

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    img = buildTestImage(join(work.path, "image"), { sizes: [4096, 120_000] });
    const issuerHost = await serve("issuer", () => ({
      storage: { inmemory: {} },
      auth: { token: { service: SERVICE, issuer: ISSUER } },
      registrykit: { keydirectory: join(work.path, "issuer", "keys"), tokenservice: {}, users: { admin } },
    }));
    issuerUrl = `http://${issuerHost}`;
    const published = await fetch(`${issuerUrl}/.well-known/jwks.json`);
    expect(published.status).toBe(200);
    expect(published.headers.get("content-type")).toBe("application/json");
    const text = await published.text();
    jwks = JSON.parse(text);
    jwksFile = join(work.path, "issuer-jwks.json");
    writeFileSync(jwksFile, text);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    skopeo?.remove();
    work.remove();
  });

  const trusting = (extra: Record<string, unknown> = {}) => (_port: number) => ({
    storage: { filesystem: { rootdirectory: "data" } },
    auth: { token: { realm: `${issuerUrl}/service/token`, service: SERVICE, issuer: ISSUER, jwks: jwksFile, ...extra } },
  });

  it("the issuer publishes one public signing key with a kid and no private members", () => {
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]!.kid).toMatch(/^[A-Z2-7]{4}(:[A-Z2-7]{4}){11}$/);
    for (const secret of ["d", "p", "q", "k"]) expect(jwks.keys[0]).not.toHaveProperty(secret);
  });

  it("a registry trusting only the saved JWKS takes skopeo's push and pull with the issuer's tokens", async () => {
    const host = await serve("trusting", trusting());
    const challenge = await fetch(`http://${host}/v2/`);
    await challenge.arrayBuffer();
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get("www-authenticate")).toBe(`Bearer realm="${issuerUrl}/service/token",service="${SERVICE}"`);

    const dest = `docker://${host}/team/app:v1`;
    const push = await skopeo.copy(img.ref, dest, { destCreds: admin });
    expect(push.code, describeRun(push)).toBe(0);
    const back = join(work.path, "back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: admin });
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    const anonymous = await skopeo.copy(dest, `oci:${join(work.path, "anon")}:v1`, { srcNoCreds: true });
    expect(anonymous.code).not.toBe(0);
  }, 180_000);

  it("signingalgorithms without the issuer's algorithm refuses its tokens; autoredirect puts the realm on the host used", async () => {
    const other = jwks.keys[0]!.kty === "EC" ? "RS256" : "ES256";
    const host = await serve("restricted", trusting({ signingalgorithms: [other], autoredirect: true, autoredirectpath: "/service/token" }));
    const challenge = await fetch(`http://${host}/v2/`);
    await challenge.arrayBuffer();
    expect(challenge.headers.get("www-authenticate")).toBe(`Bearer realm="http://${host}/service/token",service="${SERVICE}"`);
    // A token of the issuer, fetched directly, is refused here as invalid_token.
    const tokenAnswer = await fetch(`${issuerUrl}/service/token?service=${SERVICE}&scope=repository:team/app:pull`, {
      headers: { authorization: `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString("base64")}` },
    });
    const { token } = (await tokenAnswer.json()) as { token: string };
    const refused = await fetch(`http://${host}/v2/team/app/tags/list`, { headers: { authorization: `Bearer ${token}` } });
    await refused.arrayBuffer();
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
  }, 120_000);

  it("a broken JWKS file stops start-up, naming the file and the reason", async () => {
    const bad = join(work.path, "bad-jwks.json");
    writeFileSync(bad, JSON.stringify({ keys: [{ ...jwks.keys[0], kid: undefined }] }));
    const dir = join(work.path, "broken");
    mkdirSync(dir, { recursive: true });
    const port = await freePort();
    const config = writeConfig(dir, {
      version: 0.1,
      http: { addr: `127.0.0.1:${port}` },
      storage: { inmemory: {} },
      auth: { token: { realm: `${issuerUrl}/service/token`, service: SERVICE, issuer: ISSUER, jwks: bad } },
    });
    const proc = startBackground(process.execPath, [BIN, "serve", config], { cwd: dir });
    running.push(proc);
    await waitFor("registry-kit serve to exit on a bad JWKS", async () => proc.exited(), 60_000, () => proc.output());
    expect(proc.output()).toContain(`auth.token.jwks: ${bad}: JWKS key #0: has no "kid"`);
  }, 90_000);
});
