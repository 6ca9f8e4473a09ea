/**
 * Test images built by hand, byte by byte, so that the tests know every digest
 * in advance and can compare what comes back from a registry with what went in.
 *
 * - `format: "oci"` (default): an OCI image layout (`oci-layout`, `index.json`
 *   with an `org.opencontainers.image.ref.name` annotation, `blobs/sha256/…`)
 *   holding an `application/vnd.oci.image.manifest.v1+json` manifest. skopeo
 *   reads it as `oci:<dir>:<tag>`.
 * - `format: "docker"`: the same image with a Docker schema 2 manifest
 *   (`application/vnd.docker.distribution.manifest.v2+json`), written in
 *   skopeo's `dir:` transport layout (`manifest.json`, one file per blob named
 *   by its hex digest, `version`). skopeo pushes a `dir:` manifest unchanged,
 *   so the registry receives exactly these bytes.
 *
 * Every layer holds a random nonce, so no two calls produce the same digest:
 * skopeo's blob-info cache (shared by every run on the machine) can never
 * offer a blob from another test as a mount source or a "known" blob.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
export const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
export const OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip";
export const DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
export const DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json";
export const DOCKER_LAYER_GZIP = "application/vnd.docker.image.rootfs.diff.tar.gzip";

export function sha256(data: Uint8Array | string): string {
  return "sha256:" + createHash("sha256").update(data).digest("hex");
}

// ---------------------------------------------------------------------------
// A tiny ustar writer: regular files and directories, fixed owner and mtime.

export interface TarEntry {
  path: string;
  /** Omit for a directory. */
  data?: Uint8Array | string;
  mode?: number;
}

function octal(value: number, width: number): string {
  // width includes the terminating NUL
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function tarHeader(name: string, size: number, mode: number, type: "0" | "5", mtime: number): Buffer {
  const h = Buffer.alloc(512, 0);
  let prefix = "";
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf("/", 154);
    if (cut <= 0 || Buffer.byteLength(name.slice(cut + 1)) > 100) throw new Error(`tar: path too long: ${name}`);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  h.write(base, 0, 100, "utf8");
  h.write(octal(mode, 8), 100, 8, "ascii");
  h.write(octal(0, 8), 108, 8, "ascii"); // uid
  h.write(octal(0, 8), 116, 8, "ascii"); // gid
  h.write(octal(size, 12), 124, 12, "ascii");
  h.write(octal(mtime, 12), 136, 12, "ascii");
  h.write("        ", 148, 8, "ascii"); // checksum placeholder
  h.write(type, 156, 1, "ascii");
  h.write("ustar\0", 257, 6, "ascii");
  h.write("00", 263, 2, "ascii");
  h.write("root", 265, 32, "ascii");
  h.write("root", 297, 32, "ascii");
  h.write(prefix, 345, 155, "utf8");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8, "ascii");
  return h;
}

/** An uncompressed tar archive of `entries`, in the order given. */
export function tar(entries: readonly TarEntry[], mtime = 1_700_000_000): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    if (e.data === undefined) {
      const name = e.path.endsWith("/") ? e.path : e.path + "/";
      parts.push(tarHeader(name, 0, e.mode ?? 0o755, "5", mtime));
      continue;
    }
    const data = typeof e.data === "string" ? Buffer.from(e.data, "utf8") : Buffer.from(e.data);
    parts.push(tarHeader(e.path, data.length, e.mode ?? 0o644, "0", mtime));
    parts.push(data);
    const pad = (512 - (data.length % 512)) % 512;
    if (pad) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(1024, 0));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------

export interface BuildOptions {
  /** Number of layers (default 2). */
  layers?: number;
  /** Bytes of random payload per layer (default 1 KiB each); its length may set `layers`. */
  sizes?: number[];
  /** Tag written in index.json (default "v1"). */
  tag?: string;
  format?: "oci" | "docker";
  /** GOARCH written in the config (default: this machine's). */
  arch?: string;
  /** Extra labels in the config (e.g. hostile values for the web page's escaping). */
  labels?: Record<string, string>;
}

export interface BuiltLayer {
  digest: string;
  size: number;
  diffId: string;
  mediaType: string;
  /** The gzip blob. */
  bytes: Buffer;
  /** Files the layer creates (paths inside the image). */
  files: string[];
}

export interface TestImage {
  format: "oci" | "docker";
  dir: string;
  tag: string;
  /** skopeo reference of the layout: `oci:<dir>:<tag>` or `dir:<dir>`. */
  ref: string;
  nonce: string;
  mediaType: string;
  manifestBytes: Buffer;
  manifestDigest: string;
  config: { digest: string; size: number; mediaType: string; bytes: Buffer };
  layers: BuiltLayer[];
  /** Every blob digest: config first, then layers. */
  blobDigests: string[];
}

export function goArch(): string {
  switch (process.arch) {
    case "x64":
      return "amd64";
    case "ia32":
      return "386";
    default:
      return process.arch; // arm64, arm, ppc64, s390x, riscv64
  }
}

/** Build a fresh image by hand in `dir` (created if needed). */
export function buildTestImage(dir: string, opts: BuildOptions = {}): TestImage {
  const format = opts.format ?? "oci";
  const count = opts.sizes?.length ?? opts.layers ?? 2;
  const sizes = Array.from({ length: count }, (_, i) => opts.sizes?.[i] ?? 1024);
  const tag = opts.tag ?? "v1";
  const nonce = randomBytes(8).toString("hex");
  const layerType = format === "oci" ? OCI_LAYER_GZIP : DOCKER_LAYER_GZIP;
  const configType = format === "oci" ? OCI_CONFIG : DOCKER_CONFIG;
  const manifestType = format === "oci" ? OCI_MANIFEST : DOCKER_MANIFEST;

  const layers: BuiltLayer[] = sizes.map((size, i) => {
    const files = [`/layer${i}/hello.txt`, `/layer${i}/payload.bin`];
    const raw = tar([
      { path: `layer${i}` },
      { path: `layer${i}/hello.txt`, data: `registry-kit interop layer ${i} nonce ${nonce}\n` },
      { path: `layer${i}/payload.bin`, data: randomBytes(size) },
    ]);
    const gz = gzipSync(raw, { level: size > 4_000_000 ? 1 : 6 });
    return { digest: sha256(gz), size: gz.length, diffId: sha256(raw), mediaType: layerType, bytes: gz, files };
  });

  const created = "2024-01-01T00:00:00Z";
  const configJson = {
    created,
    architecture: opts.arch ?? goArch(),
    os: "linux",
    config: {
      Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      Cmd: ["/bin/sh"],
      Labels: { "org.example.registry-kit.nonce": nonce, ...opts.labels },
    },
    rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
    history: layers.map((_, i) => ({ created, created_by: `registry-kit interop layer ${i}` })),
  };
  const configBytes = Buffer.from(JSON.stringify(configJson));
  const config = { digest: sha256(configBytes), size: configBytes.length, mediaType: configType, bytes: configBytes };

  const manifest: Record<string, unknown> = {
    schemaVersion: 2,
    mediaType: manifestType,
    config: { mediaType: configType, digest: config.digest, size: config.size },
    layers: layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.size })),
  };
  if (format === "oci") manifest.annotations = { "org.example.registry-kit.nonce": nonce };
  // Deliberately not compact, with a trailing newline: a registry that
  // re-serialises the manifest instead of storing its bytes is caught at once.
  const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 3) + "\n");
  const manifestDigest = sha256(manifestBytes);

  mkdirSync(dir, { recursive: true });
  const blobs: Array<[string, Buffer]> = [[config.digest, configBytes], ...layers.map((l): [string, Buffer] => [l.digest, l.bytes])];
  if (format === "oci") {
    const blobDir = join(dir, "blobs", "sha256");
    mkdirSync(blobDir, { recursive: true });
    for (const [digest, bytes] of [...blobs, [manifestDigest, manifestBytes] as [string, Buffer]]) {
      writeFileSync(join(blobDir, digest.slice("sha256:".length)), bytes);
    }
    writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
    writeFileSync(
      join(dir, "index.json"),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [
          {
            mediaType: OCI_MANIFEST,
            digest: manifestDigest,
            size: manifestBytes.length,
            annotations: { "org.opencontainers.image.ref.name": tag },
          },
        ],
      }),
    );
  } else {
    for (const [digest, bytes] of blobs) writeFileSync(join(dir, digest.slice("sha256:".length)), bytes);
    writeFileSync(join(dir, "manifest.json"), manifestBytes);
    writeFileSync(join(dir, "version"), "Directory Transport Version: 1.1\n");
  }

  return {
    format,
    dir,
    tag,
    ref: format === "oci" ? `oci:${dir}:${tag}` : `dir:${dir}`,
    nonce,
    mediaType: manifestType,
    manifestBytes,
    manifestDigest,
    config,
    layers,
    blobDigests: blobs.map(([d]) => d),
  };
}

// ---------------------------------------------------------------------------
// Reading back what a client wrote.

export interface ReadImage {
  manifestBytes: Buffer;
  manifestDigest: string;
  mediaType: string;
  configDigest: string;
  layerDigests: string[];
  /** Digest of each blob file as found on disk, keyed by its name (verifies content, not just names). */
  blobFileDigests: Map<string, string>;
}

function parseManifest(bytes: Buffer): { mediaType: string; configDigest: string; layerDigests: string[] } {
  const m = JSON.parse(bytes.toString("utf8")) as {
    mediaType?: string;
    config: { digest: string };
    layers: Array<{ digest: string }>;
  };
  return { mediaType: m.mediaType ?? "", configDigest: m.config.digest, layerDigests: m.layers.map((l) => l.digest) };
}

/** Read the image tagged `tag` (or the only one) from an OCI layout. */
export function readOciLayout(dir: string, tag?: string): ReadImage {
  const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as {
    manifests: Array<{ digest: string; mediaType?: string; annotations?: Record<string, string> }>;
  };
  const entry =
    tag === undefined
      ? index.manifests[0]
      : index.manifests.find((m) => m.annotations?.["org.opencontainers.image.ref.name"] === tag);
  if (!entry) throw new Error(`no manifest tagged ${tag} in ${dir}/index.json: ${JSON.stringify(index)}`);
  const blob = (d: string) => readFileSync(join(dir, "blobs", "sha256", d.slice("sha256:".length)));
  const manifestBytes = blob(entry.digest);
  const parsed = parseManifest(manifestBytes);
  const blobFileDigests = new Map<string, string>();
  for (const d of [parsed.configDigest, ...parsed.layerDigests]) blobFileDigests.set(d, sha256(blob(d)));
  return { manifestBytes, manifestDigest: sha256(manifestBytes), ...parsed, blobFileDigests };
}

/** Read an image from skopeo's `dir:` layout. */
export function readDirLayout(dir: string): ReadImage {
  const manifestBytes = readFileSync(join(dir, "manifest.json"));
  const parsed = parseManifest(manifestBytes);
  const blobFileDigests = new Map<string, string>();
  for (const d of [parsed.configDigest, ...parsed.layerDigests]) {
    blobFileDigests.set(d, sha256(readFileSync(join(dir, d.slice("sha256:".length)))));
  }
  return { manifestBytes, manifestDigest: sha256(manifestBytes), ...parsed, blobFileDigests };
}

// ---------------------------------------------------------------------------
// Multi-platform: an OCI image index over one hand-built image per platform.

export interface TestIndex {
  dir: string;
  tag: string;
  /** `oci:<dir>:<tag>`; push it with `skopeo copy --all`. */
  ref: string;
  indexBytes: Buffer;
  indexDigest: string;
  images: Array<{ arch: string; image: TestImage }>;
}

/**
 * An OCI layout whose `tag` names an `application/vnd.oci.image.index.v1+json`
 * (pretty-printed, exact bytes known) over one image per architecture.
 */
export function buildTestIndex(dir: string, opts: { archs?: string[]; tag?: string; layers?: number } = {}): TestIndex {
  const tag = opts.tag ?? "v1";
  const archs = opts.archs ?? ["amd64", "arm64"];
  const images = archs.map((arch) => ({ arch, image: buildTestImage(dir, { arch, tag: `${tag}-${arch}`, layers: opts.layers ?? 1 }) }));
  const index = {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: images.map(({ arch, image }) => ({
      mediaType: OCI_MANIFEST,
      digest: image.manifestDigest,
      size: image.manifestBytes.length,
      platform: { architecture: arch, os: "linux" },
    })),
  };
  const indexBytes = Buffer.from(JSON.stringify(index, null, 2) + "\n");
  const indexDigest = sha256(indexBytes);
  writeFileSync(join(dir, "blobs", "sha256", indexDigest.slice("sha256:".length)), indexBytes);
  writeFileSync(
    join(dir, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        { mediaType: OCI_INDEX, digest: indexDigest, size: indexBytes.length, annotations: { "org.opencontainers.image.ref.name": tag } },
      ],
    }),
  );
  return { dir, tag, ref: `oci:${dir}:${tag}`, indexBytes, indexDigest, images };
}
