/**
 * podman and buildah, isolated per test and made to work as root in a CI
 * container without systemd, overlayfs or a container runtime:
 *
 * - `--storage-driver vfs` with `--root`/`--runroot` in a temp dir, so no
 *   overlay mount is needed and no image store is shared between tests;
 * - podman: `--cgroup-manager cgroupfs` (no systemd/D-Bus) and
 *   `--events-backend file` (no journald), `--tmpdir` for its state;
 * - `CONTAINERS_CONF`, `CONTAINERS_REGISTRIES_CONF`,
 *   `CONTAINERS_STORAGE_CONF`, `REGISTRY_AUTH_FILE` and `HOME`/`XDG_*` all
 *   point into the sandbox, and `--signature-policy` accepts anything;
 * - `--tls-verify=false` for loopback http.
 *
 * Nothing here runs a container: buildah builds `from scratch` with `copy`
 * and `commit`, and podman only pulls, pushes and inspects.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeRun, requireTool, run, tempDir, type RunResult } from "./process.js";
import { isolatedToolConfig } from "./tool-config.js";

export interface ContainersSandbox {
  dir: string;
  env: NodeJS.ProcessEnv;
  authfile: string;
  /** `buildah <storage flags> <args>`; never throws. */
  buildah(args: string[], timeoutMs?: number): Promise<RunResult>;
  /** `podman <storage flags> <args>`; never throws. */
  podman(args: string[], timeoutMs?: number): Promise<RunResult>;
  /**
   * Build a one-layer image from scratch holding `files` (path → content),
   * committed as `name` in the sandbox's local store. Returns the image id.
   */
  buildScratchImage(name: string, files: Record<string, string>): Promise<string>;
  remove(): void;
}

export function containersSandbox(label = "containers"): ContainersSandbox {
  const buildahBin = requireTool("buildah");
  const podmanBin = requireTool("podman");
  const tmp = tempDir(label);
  const { sub: d, authfile, policy, registriesConf } = isolatedToolConfig(tmp.path);
  const root = d("storage");
  const runroot = d("runroot");
  const podmanTmp = d("podman-tmp");
  const home = d("home");
  const runtimeDir = d("xdg-run");
  const bigTmp = d("tmp");
  const ctx = d("context");

  const storageConf = join(tmp.path, "storage.conf");
  writeFileSync(storageConf, `[storage]\ndriver = "vfs"\nrunroot = "${runroot}"\ngraphroot = "${root}"\n`);
  const containersConf = join(tmp.path, "containers.conf");
  writeFileSync(
    containersConf,
    [
      "[engine]",
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      `events_logfile_path = "${join(tmp.path, "events.log")}"`,
      `tmp_dir = "${podmanTmp}"`,
      'runtime = "crun"',
      "[containers]",
      'log_driver = "k8s-file"',
      "",
    ].join("\n"),
  );

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: home,
    XDG_RUNTIME_DIR: runtimeDir,
    XDG_CONFIG_HOME: d("xdg-config"),
    XDG_DATA_HOME: d("xdg-data"),
    TMPDIR: bigTmp,
    REGISTRY_AUTH_FILE: authfile,
    CONTAINERS_CONF: containersConf,
    CONTAINERS_REGISTRIES_CONF: registriesConf,
    CONTAINERS_STORAGE_CONF: storageConf,
    BUILDAH_ISOLATION: "chroot",
    STORAGE_DRIVER: "vfs",
    LANG: "C.UTF-8",
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  };
  const storageFlags = ["--root", root, "--runroot", runroot, "--storage-driver", "vfs"];
  const buildah = (args: string[], timeoutMs = 180_000) =>
    run(buildahBin, [...storageFlags, ...args], { env, replaceEnv: true, timeoutMs, cwd: ctx });
  const podman = (args: string[], timeoutMs = 180_000) =>
    run(
      podmanBin,
      [...storageFlags, "--cgroup-manager", "cgroupfs", "--events-backend", "file", "--tmpdir", podmanTmp, ...args],
      { env, replaceEnv: true, timeoutMs, cwd: ctx },
    );

  const must = async (p: Promise<RunResult>) => {
    const r = await p;
    if (r.code !== 0) throw new Error(`command failed:\n${describeRun(r)}`);
    return r;
  };

  return {
    dir: tmp.path,
    env,
    authfile,
    buildah,
    podman,
    async buildScratchImage(name, files) {
      const container = `rk-build-${Math.random().toString(36).slice(2, 10)}`;
      await must(buildah(["from", "--name", container, "--signature-policy", policy, "scratch"]));
      try {
        for (const [path, content] of Object.entries(files)) {
          const local = join(ctx, path.replace(/^\/+/, "").replace(/\//g, "_"));
          writeFileSync(local, content);
          await must(buildah(["copy", container, local, path]));
        }
        await must(buildah(["config", "--cmd", "/bin/true", "--label", "org.example.registry-kit=interop", container]));
        const r = await must(buildah(["commit", "--signature-policy", policy, "--format", "oci", "-q", container, name]));
        return r.stdout.trim();
      } finally {
        await buildah(["rm", container]);
      }
    },
    remove: () => tmp.remove(),
  };
}

/** podman/buildah flags for talking to a plain-http loopback registry. */
export const INSECURE = "--tls-verify=false";
