/**
 * The real command: `node bin/registry-kit.mjs serve` as a child process,
 * on a free port with a temporary data directory.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../../bin/registry-kit.mjs", import.meta.url));
const PASSWORD = "Adm1nPassword";
let data: string;

interface Started {
  child: ChildProcess;
  url: string;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function start(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: data,
    env: { ...process.env, PORT: "0", REGISTRY_KIT_DATA: data, REGISTRY_KIT_ADMIN_PASSWORD: PASSWORD, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner after 20 s\nstdout: ${out}\nstderr: ${err}`)), 20_000);
    const check = (): void => {
      const match = /registry-kit listening on (http:\/\/\S+)/.exec(out);
      if (match && out.includes("SIGINT (Ctrl-C) or SIGTERM stops the server")) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, out: () => out, err: () => err, exited });
      }
    };
    child.stdout!.on("data", check);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before the banner\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

async function stop(s: Started): Promise<number | null> {
  s.child.kill("SIGTERM");
  return s.exited;
}

const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString("base64")}`;
const kidOf = (token: string): string => JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid;
const sha256 = (bytes: Uint8Array | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

async function until(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !condition() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
}

async function fetchToken(url: string, scope: string): Promise<string> {
  const res = await fetch(`${url}/service/token?service=registry-kit&scope=${encodeURIComponent(scope)}`, { headers: { authorization: basic } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

beforeAll(async () => {
  data = await mkdtemp(path.join(tmpdir(), "rk-serve-"));
});
afterAll(async () => {
  await rm(data, { recursive: true, force: true });
});

describe("registry-kit serve", () => {
  let firstKid: string;

  it("serves the registry, the token service and the users API on one origin, and exits 0 on SIGTERM", async () => {
    const s = await start(["serve"]);
    try {
      expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const challenge = await fetch(`${s.url}/v2/`);
      expect(challenge.status).toBe(401);
      expect(challenge.headers.get("www-authenticate")).toBe(`Bearer realm="${s.url}/service/token",service="registry-kit"`);

      const token = await fetchToken(s.url, "repository:team/app:pull,push");
      firstKid = kidOf(token);
      expect(s.out()).toContain(`key id (kid)    ${firstKid}`);
      const auth = { authorization: `Bearer ${token}` };
      expect((await fetch(`${s.url}/v2/`, { headers: auth })).status).toBe(200);

      // A whole push and pull through the real server.
      const layer = new TextEncoder().encode("layer bytes ".repeat(1000));
      const config = JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] } });
      for (const blob of [layer, new TextEncoder().encode(config)]) {
        const post = await fetch(`${s.url}/v2/team/app/blobs/uploads/`, { method: "POST", headers: auth });
        expect(post.status).toBe(202);
        const location = new URL(post.headers.get("location")!, s.url);
        location.searchParams.set("digest", sha256(blob));
        const put = await fetch(location, { method: "PUT", headers: { ...auth, "content-type": "application/octet-stream" }, body: blob });
        expect(put.status).toBe(201);
      }
      const manifest = JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.image.config.v1+json", size: config.length, digest: sha256(config) },
        layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", size: layer.length, digest: sha256(layer) }],
      });
      const putManifest = await fetch(`${s.url}/v2/team/app/manifests/v1`, {
        method: "PUT", headers: { ...auth, "content-type": "application/vnd.oci.image.manifest.v1+json" }, body: manifest,
      });
      expect(putManifest.status).toBe(201);
      const pulled = await fetch(`${s.url}/v2/team/app/manifests/v1`, { headers: { ...auth, accept: "application/vnd.oci.image.manifest.v1+json" } });
      expect(await pulled.text()).toBe(manifest);
      const blob = await fetch(`${s.url}/v2/team/app/blobs/${sha256(layer)}`, { headers: auth });
      expect(sha256(new Uint8Array(await blob.arrayBuffer()))).toBe(sha256(layer));

      const me = await fetch(`${s.url}/api/users/current`, { headers: { authorization: basic } });
      expect(me.status).toBe(200);

      // One Common Log Format line per request on stdout (written when the response closes).
      await until(() => s.out().includes("GET /api/users/current"));
      expect(s.out()).toMatch(/^127\.0\.0\.1 - - \[\d{2}\/\w{3}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "GET \/v2\/ HTTP\/1\.1" 401 \d+$/m);
      expect(s.out()).toMatch(/^127\.0\.0\.1 - admin \[.+\] "GET \/api\/users\/current HTTP\/1\.1" 200 \d+$/m);
    } finally {
      expect(await stop(s)).toBe(0);
    }
  });

  it("reuses the signing key (same kid) and the data after a restart", async () => {
    const s = await start(["serve"]);
    try {
      expect(s.out()).not.toContain("generated now");
      expect(s.out()).not.toContain("administrator");
      const token = await fetchToken(s.url, "repository:team/app:pull");
      expect(kidOf(token)).toBe(firstKid);
      const tags = await fetch(`${s.url}/v2/team/app/tags/list`, { headers: { authorization: `Bearer ${token}` } });
      expect(await tags.json()).toEqual({ name: "team/app", tags: ["v1"] });
    } finally {
      expect(await stop(s)).toBe(0);
    }
  });

  it("prints a generated administrator password once", async () => {
    const dir = path.join(data, "fresh");
    const s = await start(["serve"], { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: "" });
    try {
      const password = /admin password  (\S+)/.exec(s.out())?.[1];
      expect(password).toBeTruthy();
      const res = await fetch(`${s.url}/api/users/current`, {
        headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString("base64")}` },
      });
      expect(res.status).toBe(200);
    } finally {
      expect(await stop(s)).toBe(0);
    }
  });

  it("runs a Distribution config.yml", async () => {
    const file = path.join(data, "config.yml");
    await writeFile(file, `version: 0.1
http:
  addr: 127.0.0.1:0
  secret: a-shared-secret
  headers:
    X-Content-Type-Options: [nosniff]
  frobnicate: true
storage:
  inmemory: {}
`);
    const s = await start(["serve", file]);
    try {
      expect(s.err()).toContain("http.frobnicate: unknown key, ignored");
      const res = await fetch(`${s.url}/v2/`);
      expect(res.status).toBe(200); // no auth section: an open registry, as Distribution
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    } finally {
      expect(await stop(s)).toBe(0);
    }
  });

  it("a port in use: exit code 1, and how to choose another (PORT= with the defaults, http.addr with a CONFIG)", async () => {
    const holder = createNetServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      await expect(start(["serve"], { PORT: String(port) })).rejects.toThrow(
        new RegExp(`exited with 1[\\s\\S]*cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE[\\s\\S]*choose another with PORT=${port + 1} \\(or PORT=0 for any free one\\)`),
      );
      const file = path.join(data, "busy.yml");
      await writeFile(file, `storage: {inmemory: {}}\nhttp: {addr: "127.0.0.1:${port}"}\n`);
      await expect(start(["serve", file])).rejects.toThrow(
        new RegExp(`exited with 1[\\s\\S]*EADDRINUSE[\\s\\S]*set another port in http\\.addr \\(or REGISTRY_HTTP_ADDR=127\\.0\\.0\\.1:${port + 1}\\)`),
      );
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("stops with exit code 1 and names the key of an invalid value", async () => {
    const file = path.join(data, "bad.yml");
    await writeFile(file, "storage: {inmemory: {}}\ncatalog: {maxentries: -5}\n");
    await expect(start(["serve", file])).rejects.toThrow(/exited with 1[\s\S]*catalog\.maxentries: expected a positive integer/);
    await expect(start(["serve"], { REGISTRY_HTTP_ADDR: "nowhere" })).rejects.toThrow(/exited with 1[\s\S]*http\.addr \(from REGISTRY_HTTP_ADDR\)/);
  });
});
