/**
 * Issue "Adapters, the all-in-one server…", done-when: on a fresh clone,
 * `npm install && npm start`, then `skopeo copy` pushes to 127.0.0.1:5000
 * with the bootstrapped administrator's credentials and pulls back; podman
 * and buildah (`--storage-driver vfs`) do the same.
 *
 * This runs exactly `npm start` (`npm` with the single argument `start`, in
 * the repository root, no build step: bin/registry-kit.mjs falls back to the
 * sources through tsx) with only `REGISTRY_KIT_DATA` (a temp dir) and
 * `REGISTRY_KIT_ADMIN_PASSWORD` set; `HOST`, `PORT` and every `REGISTRY_*`
 * variable of the caller's environment are removed so the defaults apply.
 *
 * **Port choice.** The done-when names 127.0.0.1:5000, the documented
 * default, so the test uses it for real rather than setting PORT: setting it
 * would test a different command line. Interop files run one at a time
 * (`fileParallelism: false`) and no other test binds 5000 (unit tests use
 * port 0, which the kernel never picks below 32768), so in CI the port is
 * free. If 127.0.0.1:5000 is busy the test FAILS with a message saying so; it
 * never silently moves to another port.
 *
 * **Stopping.** npm 11 runs the script as `npm → sh -c "node …" → node`.
 * Observed: SIGTERM (or SIGINT) sent to the npm process alone kills npm and
 * sh but **not** node, which keeps serving as an orphan; npm only forwards
 * the signal to its direct child. So the test stops it the two ways that
 * work: (1) SIGTERM to the server process itself — it drains and exits 0,
 * and npm then exits 0 too; (2) after a restart, SIGTERM to the whole process
 * group (what Ctrl-C, systemd and container runtimes do) — npm dies of the
 * signal, the server logs its graceful shutdown, and nothing of the group
 * survives. The group is SIGKILLed in afterAll and in an exit hook whatever
 * happens.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bannerUrl, REPO_ROOT } from "./helpers/all-in-one.js";
import { containersSandbox, type ContainersSandbox } from "./helpers/containers.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, requireTool, tempDir, waitFor } from "./helpers/process.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const HOST = "127.0.0.1:5000";
const admin = { username: "admin", password: "Adm1n-NpmStart-Pass" };
const creds = `${admin.username}:${admin.password}`;

interface NpmStart {
  child: ChildProcess;
  output(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: ChildProcess[] = [];
const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};
const killGroup = (child: ChildProcess, signal: NodeJS.Signals): void => {
  if (child.pid !== undefined && groupAlive(child.pid)) {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // gone meanwhile
    }
  }
};
process.on("exit", () => started.forEach((c) => killGroup(c, "SIGKILL")));

/** Fail (never skip, never move) when 127.0.0.1:5000 is taken. */
function assertPort5000Free(): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `127.0.0.1:5000 is not available (${error.code}): this test runs \`npm start\` on its documented default ` +
            "address and does not change the port; stop whatever listens there (ss -ltnp 'sport = :5000') and rerun",
        ),
      ),
    );
    probe.listen(5000, "127.0.0.1", () => probe.close(() => resolve()));
  });
}

function npmStart(dataDir: string): NpmStart {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === "HOST" || key === "PORT" || key.startsWith("REGISTRY_")) continue;
    env[key] = value;
  }
  env.REGISTRY_KIT_DATA = dataDir;
  env.REGISTRY_KIT_ADMIN_PASSWORD = admin.password;
  const child = spawn(requireTool("npm"), ["start"], { cwd: REPO_ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  started.push(child);
  let out = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (out += b.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => out, exit };
}

async function waitForBanner(s: NpmStart): Promise<string> {
  let url: string | undefined;
  await waitFor(
    "the banner of `npm start`",
    async () => {
      if (s.child.exitCode !== null || s.child.signalCode !== null) throw new Error(`npm start exited:\n${s.output()}`);
      url = bannerUrl(s.output());
      return url !== undefined;
    },
    60_000,
    () => s.output(),
  );
  return url!;
}

/** The `node bin/registry-kit.mjs serve` process in npm's process group. */
function serverPid(group: number): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (pgrp === group && cmd.some((a) => a.endsWith("bin/registry-kit.mjs")) && cmd.includes("serve")) return Number(entry);
    } catch {
      // exited while we looked
    }
  }
  throw new Error(`no registry-kit serve process in process group ${group}`);
}

describe("npm start on a fresh clone: skopeo, podman and buildah against 127.0.0.1:5000", () => {
  const work = tempDir("npm-start");
  const id = randomBytes(3).toString("hex");
  const data = join(work.path, "data");
  let server: NpmStart | undefined;
  let skopeo: SkopeoSandbox;
  let builder: ContainersSandbox;
  let podman: ContainersSandbox;
  let img: TestImage;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    builder = containersSandbox("npm-start-buildah");
    podman = containersSandbox("npm-start-podman");
    img = buildTestImage(join(work.path, "src"), { sizes: [4096, 100_000] });
    await assertPort5000Free();
    server = npmStart(data);
    await waitForBanner(server);
  });
  afterAll(async () => {
    for (const c of started) killGroup(c, "SIGKILL");
    skopeo?.remove();
    builder?.remove();
    podman?.remove();
    work.remove();
  });

  const log = () => `--- npm start output ---\n${server?.output().slice(-6000)}`;

  it("listens on the documented default 127.0.0.1:5000 and bootstraps the administrator", () => {
    const out = server!.output();
    expect(bannerUrl(out), log()).toBe(`http://${HOST}`);
    // npm echoes the script it runs: the server starts with the heap flags docs/performance.md explains
    expect(out).toContain("> node --initial-old-space-size=64 --max-semi-space-size=2 --expose-gc --no-concurrent-recompilation bin/registry-kit.mjs serve");
    expect(out).toContain(`  auth            token, realm http://${HOST}/service/token`);
    expect(out).toContain(`  storage         filesystem ${data}/registry`);
    expect(out).toContain('  administrator   "admin" created');
    expect(out).not.toContain("admin password"); // REGISTRY_KIT_ADMIN_PASSWORD was set: nothing printed
  });

  it("skopeo pushes with the administrator's credentials and pulls back identical digests and bytes", async () => {
    const dest = `docker://${HOST}/admin/app-${id}:v1`;
    const push = await skopeo.copy(img.ref, dest, { destCreds: admin });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    expect((await skopeo.inspectRaw(dest, { creds: admin })).equals(img.manifestBytes)).toBe(true);
    const back = join(work.path, "back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: admin });
    expect(pull.code, describeRun(pull)).toBe(0);
    const got = readOciLayout(back, "v1");
    expect(got.manifestDigest).toBe(img.manifestDigest);
    expect(got.configDigest).toBe(img.config.digest);
    expect(got.layerDigests).toEqual(img.layers.map((l) => l.digest));
    for (const [name, contentDigest] of got.blobFileDigests) expect(contentDigest).toBe(name);
  });

  it("buildah (vfs) builds from scratch and pushes; podman (vfs) pulls it, pushes it on and the registry serves what podman reports", async () => {
    const local = `localhost/npm-start-${id}:v1`;
    await builder.buildScratchImage(local, { "/hello.txt": `hello from npm start ${id}\n` });
    const ref = `${HOST}/admin/buildah-${id}:v1`;
    const digestFile = join(builder.dir, "buildah.digest");
    const push = await builder.buildah(["push", "--tls-verify=false", "--creds", creds, "--digestfile", digestFile, local, `docker://${ref}`]);
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    const buildahDigest = readFileSync(digestFile, "utf8").trim();
    expect(buildahDigest).toMatch(/^sha256:[0-9a-f]{64}$/);

    const pull = await podman.podman(["pull", "--tls-verify=false", "--creds", creds, ref]);
    expect(pull.code, `${describeRun(pull)}\n${log()}`).toBe(0);
    const inspect = await podman.podman(["image", "inspect", ref]);
    expect(inspect.code, describeRun(inspect)).toBe(0);
    const [info] = JSON.parse(inspect.stdout) as Array<{ Digest: string }>;
    expect(info!.Digest).toBe(buildahDigest);

    const again = `${HOST}/admin/podman-${id}:v1`;
    const podmanDigestFile = join(podman.dir, "podman.digest");
    const podmanPush = await podman.podman(["push", "--tls-verify=false", "--creds", creds, "--digestfile", podmanDigestFile, ref, `docker://${again}`]);
    expect(podmanPush.code, `${describeRun(podmanPush)}\n${log()}`).toBe(0);
    const served = await skopeo.inspectRaw(`docker://${again}`, { creds: admin });
    expect(`sha256:${createHash("sha256").update(served).digest("hex")}`).toBe(readFileSync(podmanDigestFile, "utf8").trim());
  });

  it("SIGTERM to the server: it drains and exits 0, npm exits 0, nothing of the process tree is left", async () => {
    const s = server!;
    const pid = serverPid(s.child.pid!);
    process.kill(pid, "SIGTERM");
    const result = await Promise.race([s.exit, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 20_000))]);
    expect(result, log()).toEqual({ code: 0, signal: null });
    expect(s.output()).toContain("registry-kit: SIGTERM received, finishing in-flight requests");
    await waitFor("npm's process group to be gone", async () => !groupAlive(s.child.pid!), 5_000);
  });

  it("npm start again on the same data; SIGTERM to the process group stops everything (npm dies of the signal, the server shuts down gracefully)", async () => {
    await assertPort5000Free();
    const s = (server = npmStart(data));
    expect(await waitForBanner(s)).toBe(`http://${HOST}`);
    expect(s.output()).not.toContain("administrator   \"admin\" created"); // the store already has one
    expect((await skopeo.inspectRaw(`docker://${HOST}/admin/app-${id}:v1`, { creds: admin })).equals(img.manifestBytes)).toBe(true);
    killGroup(s.child, "SIGTERM");
    // npm itself does not survive the signal (exit by SIGTERM, or 143 on npm versions that handle it)
    const result = await s.exit;
    expect(result.signal === "SIGTERM" || result.code === 143 || result.code === 0, `${JSON.stringify(result)}\n${log()}`).toBe(true);
    await waitFor("npm's process group to be gone", async () => !groupAlive(s.child.pid!), 15_000, () => s.output());
    expect(s.output()).toContain("registry-kit: SIGTERM received, finishing in-flight requests");
    expect(s.output()).not.toContain("SIGTERM again");
    expect(s.output()).not.toContain("shutdown failed");
  });
});
