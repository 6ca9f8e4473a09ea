/**
 * `registry-kit serve` with `http.tls`, as a child process: the banner and the
 * default token realm are https, responses carry the default
 * `Strict-Transport-Security` (issue 41, item 13), HTTP/2 is offered by ALPN, and bad
 * certificate files stop start-up with one clear line (no stack trace).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect as h2connect } from "node:http2";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { makeCerts, type Certs } from "../adapters/certs.js";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
let certs: Certs;
let dir: string;
beforeAll(() => {
  certs = makeCerts();
  dir = mkdtempSync(join(tmpdir(), "rk-serve-tls-"));
});
afterAll(() => {
  certs.remove();
  rmSync(dir, { recursive: true, force: true });
});

function config(name: string, tls: Record<string, unknown>): string {
  const path = join(dir, `${name}.yml`);
  writeFileSync(path, stringify({
    version: 0.1,
    http: { addr: "127.0.0.1:0", tls },
    storage: { inmemory: {} },
    registrykit: { keydirectory: join(dir, `${name}-keys`), tokenservice: {} },
  }));
  return path;
}

interface Run {
  out: string;
  err: string;
  code: number | null;
}

/** Start the CLI; resolve at its banner (then stop it) or at its exit. */
function runServe(configPath: string, whileUp?: (url: string) => Promise<void>): Promise<Run> {
  const child = spawn(process.execPath, [BIN, "serve", configPath], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    let checked = false;
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const match = /registry-kit listening on (\S+)/.exec(out);
      if (match && !checked && out.includes("SIGINT")) {
        checked = true;
        (whileUp ?? (async () => {}))(match[1]!).then(() => child.kill("SIGTERM"), (error: unknown) => {
          child.kill("SIGKILL");
          reject(error);
        });
      }
    });
    child.on("exit", (code) => resolve({ out, err, code }));
  });
}

describe("registry-kit serve with http.tls", () => {
  it("listens on https: banner, default realm and HTTP/2 by ALPN", async () => {
    let challenge = "";
    let alpn: string | false | undefined;
    const run = await runServe(config("ok", { certificate: certs.serverCert, key: certs.serverKey }), async (url) => {
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      challenge = await new Promise<string>((resolve, reject) => {
        const req = request(`${url}/v2/`, { ca: certs.read(certs.ca), agent: false }, (res) => {
          res.resume();
          resolve(`${res.statusCode} ${res.headers["www-authenticate"]} ${res.headers["strict-transport-security"]}`);
        });
        req.on("error", reject);
        req.end();
      });
      const session = h2connect(url, { ca: certs.read(certs.ca) });
      alpn = await new Promise((resolve, reject) => {
        session.once("connect", () => resolve(session.alpnProtocol));
        session.once("error", reject);
      });
      session.close();
    });
    expect(run.out).toMatch(/registry {8}https:\/\/127\.0\.0\.1:\d+\/v2\//);
    expect(challenge).toMatch(/^401 Bearer realm="https:\/\/127\.0\.0\.1:\d+\/service\/token".* max-age=31536000$/);
    expect(alpn).toBe("h2");
    expect(run.code).toBe(0);
  });

  it("stops with one line for a missing certificate file", async () => {
    const missing = join(dir, "missing.crt");
    const run = await runServe(config("missing", { certificate: missing, key: certs.serverKey }));
    expect(run.code).toBe(1);
    expect(run.err.trim()).toBe(`registry-kit: configuration error: http.tls: cannot read the TLS certificate file ${missing}: ENOENT`);
    expect(run.out).not.toContain("listening");
  });

  it("stops with one line for a key that does not belong to the certificate", async () => {
    const run = await runServe(config("mismatch", { certificate: certs.serverCert, key: certs.clientKey }));
    expect(run.code).toBe(1);
    expect(run.err.trim().split("\n")).toHaveLength(1);
    expect(run.err).toMatch(/^registry-kit: configuration error: http\.tls: TLS options refused by OpenSSL: .*key values mismatch/);
  });
});
