/**
 * `http.tls` with real clients: skopeo and podman push and pull over https,
 * trusting the test CA through a certificates directory (`--cert-dir`,
 * `--dest-cert-dir`/`--src-cert-dir`; never `--tls-verify=false`), and with
 * `clientcas` set only with `client.cert`/`client.key` in that directory.
 * Side by side, Debian's `docker-registry` (Distribution 2.8) and
 * `registry-kit serve` run on the same config file (TLS + clientcas), and
 * skopeo sees the same outcomes from both; curl's plain `http://` request to
 * the TLS port gets the same 400 from both (issue 43).
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCerts, type Certs } from "../adapters/certs.js";
import { containersSandbox, type ContainersSandbox } from "./helpers/containers.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, requireTool, run, tempDir, type Background } from "./helpers/process.js";
import { startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

/** How Go's TLS stack reports a handshake the server refused for want of a (good) client certificate. */
const TLS_REFUSAL = /remote error: tls: (bad certificate|certificate required|unknown certificate authority)/;

/** A containers/image certificates directory: `*.crt` are CAs, `client.cert` + `client.key` a client identity. */
function certDir(dir: string, certs: Certs, client?: "good" | "other"): string {
  mkdirSync(dir, { recursive: true });
  copyFileSync(certs.ca, join(dir, "ca.crt"));
  if (client) {
    copyFileSync(client === "good" ? certs.clientCert : certs.otherClientCert, join(dir, "client.cert"));
    copyFileSync(client === "good" ? certs.clientKey : certs.otherClientKey, join(dir, "client.key"));
  }
  return dir;
}

/** Readiness over https with the CA and the client certificate: any HTTP answer. */
function httpsAnswers(url: string, certs: Certs): () => Promise<boolean> {
  return () =>
    new Promise((resolve, reject) => {
      const req = request(url, {
        ca: certs.read(certs.ca), cert: certs.read(certs.clientCert), key: certs.read(certs.clientKey), agent: false,
      }, (res) => {
        res.resume();
        res.on("end", () => resolve(true));
      });
      req.on("error", reject);
      req.end();
    });
}

describe("http.tls with skopeo and podman", () => {
  const work = tempDir("interop-tls");
  const id = randomBytes(3).toString("hex");
  let certs: Certs;
  let skopeo: SkopeoSandbox;
  let podman: ContainersSandbox;
  let img: TestImage;
  const running: Background[] = [];
  let trust = "";
  let withClient = "";
  let withOtherClient = "";

  beforeAll(() => {
    certs = makeCerts();
    skopeo = skopeoSandbox();
    podman = containersSandbox("tls-podman");
    img = buildTestImage(join(work.path, "img"), { sizes: [4096, 100_000] });
    trust = certDir(join(work.path, "certs-trust"), certs);
    withClient = certDir(join(work.path, "certs-client"), certs, "good");
    withOtherClient = certDir(join(work.path, "certs-other"), certs, "other");
  });
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    skopeo?.remove();
    podman?.remove();
    certs?.remove();
    work.remove();
  });

  async function start(which: SameConfigServer, clientcas: boolean): Promise<string> {
    const port = await freePort();
    const dir = join(work.path, `${which}-${clientcas ? "mtls" : "tls"}`);
    mkdirSync(dir, { recursive: true });
    const config = writeConfig(dir, {
      version: 0.1,
      http: {
        addr: `127.0.0.1:${port}`,
        tls: { certificate: certs.serverCert, key: certs.serverKey, ...(clientcas ? { clientcas: [certs.ca] } : {}), minimumtls: "tls1.2" },
      },
      storage: { filesystem: { rootdirectory: join(dir, "data") } },
    });
    running.push(await startOnConfig(which, config, dir, httpsAnswers(`https://127.0.0.1:${port}/v2/`, certs)));
    return `127.0.0.1:${port}`;
  }

  const push = (host: string, repo: string, dir: string) =>
    skopeo.raw(["copy", "--retry-times", "0", "--dest-cert-dir", dir, img.ref, `docker://${host}/${repo}:v1`]);
  const pull = (host: string, repo: string, dir: string, into: string) =>
    skopeo.raw(["copy", "--retry-times", "0", "--src-cert-dir", dir, `docker://${host}/${repo}:v1`, `oci:${into}:v1`]);

  it("registry-kit serve: skopeo and podman push and pull over https trusting the CA by --cert-dir", async () => {
    const host = await start("registry-kit", false);
    const repo = `tls-${id}/app`;
    // Without the CA the server's certificate is not trusted: refused, nothing sent.
    const untrusted = await skopeo.raw(["copy", "--retry-times", "0", img.ref, `docker://${host}/${repo}:v1`]);
    expect(untrusted.code, describeRun(untrusted)).not.toBe(0);
    expect(untrusted.stderr).toMatch(/certificate|x509/i);

    const pushed = await push(host, repo, trust);
    expect(pushed.code, describeRun(pushed)).toBe(0);
    const back = join(work.path, "pulled-tls");
    const pulled = await pull(host, repo, trust, back);
    expect(pulled.code, describeRun(pulled)).toBe(0);
    expect(readOciLayout(back, "v1").manifestDigest).toBe(img.manifestDigest);

    const ref = `${host}/${repo}:v1`;
    const podPull = await podman.podman(["pull", "--cert-dir", trust, ref]);
    expect(podPull.code, describeRun(podPull)).toBe(0);
    const podPush = await podman.podman(["push", "--cert-dir", trust, ref, `docker://${host}/${repo}-again:v1`]);
    expect(podPush.code, describeRun(podPush)).toBe(0);
    const again = await skopeo.raw(["inspect", "--raw", "--cert-dir", trust, `docker://${host}/${repo}-again:v1`]);
    expect(again.code, describeRun(again)).toBe(0);
    expect(JSON.parse(again.stdout).layers).toHaveLength(img.layers.length);
  });

  it("registry-kit serve with clientcas: podman pushes and pulls with client.cert/client.key, and is refused without", async () => {
    const host = await start("registry-kit", true);
    const ref = `${host}/mtls-${id}/podman:v1`;
    const copied = await skopeo.raw(["copy", "--retry-times", "0", "--dest-cert-dir", withClient, img.ref, `docker://${ref}`]);
    expect(copied.code, describeRun(copied)).toBe(0);
    const refused = await podman.podman(["pull", "--cert-dir", trust, ref]);
    expect(refused.code, describeRun(refused)).not.toBe(0);
    expect(refused.stderr).toMatch(TLS_REFUSAL);
    const pulled = await podman.podman(["pull", "--cert-dir", withClient, ref]);
    expect(pulled.code, describeRun(pulled)).toBe(0);
    const pushed = await podman.podman(["push", "--cert-dir", withClient, ref, `docker://${host}/mtls-${id}/podman-again:v1`]);
    expect(pushed.code, describeRun(pushed)).toBe(0);
    const pushRefused = await podman.podman(["push", "--cert-dir", trust, ref, `docker://${host}/mtls-${id}/podman-refused:v1`]);
    expect(pushRefused.code, describeRun(pushRefused)).not.toBe(0);
    expect(pushRefused.stderr).toMatch(TLS_REFUSAL);
  });

  const plainAnswers: Partial<Record<SameConfigServer, string>> = {};
  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`same config (TLS) on ${which}: curl with http:// gets Go's 400 "Client sent an HTTP request to an HTTPS server." (issue 43)`, async () => {
      const host = await start(which, false);
      const result = await run(requireTool("curl"), ["-sS", "-i", "--http1.1", `http://${host}/v2/`]);
      expect(result.code, describeRun(result)).toBe(0);
      plainAnswers[which] = result.stdout;
      expect(result.stdout).toBe("HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n");
    });
  }
  it("both answered plain HTTP alike", () => {
    expect(plainAnswers["registry-kit"]).toBeDefined();
    expect(plainAnswers["registry-kit"]).toBe(plainAnswers.distribution);
  });

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`same config (TLS + clientcas) on ${which}: skopeo pushes and pulls with a client certificate, refused without one or with another CA's`, async () => {
      const host = await start(which, true);
      const repo = `same-${id}/app`;
      const none = await push(host, repo, trust);
      expect(none.code, describeRun(none)).not.toBe(0);
      expect(none.stderr).toMatch(TLS_REFUSAL);
      const other = await push(host, repo, withOtherClient);
      expect(other.code, describeRun(other)).not.toBe(0);
      expect(other.stderr).toMatch(TLS_REFUSAL);
      const pushed = await push(host, repo, withClient);
      expect(pushed.code, describeRun(pushed)).toBe(0);
      const back = join(work.path, `pulled-${which}`);
      const pulledWithout = await pull(host, repo, trust, `${back}-refused`);
      expect(pulledWithout.code, describeRun(pulledWithout)).not.toBe(0);
      expect(pulledWithout.stderr).toMatch(TLS_REFUSAL);
      const pulled = await pull(host, repo, withClient, back);
      expect(pulled.code, describeRun(pulled)).toBe(0);
      expect(readOciLayout(back, "v1").manifestDigest).toBe(img.manifestDigest);
    });
  }
});
