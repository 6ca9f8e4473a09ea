import { createHash } from "node:crypto";
import { createRegistry, type RegistryOptions } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

export const BASE = "http://reg.test";

export type Handler = (request: Request) => Promise<Response>;

export function sha256(data: Uint8Array | string): string {
  return "sha256:" + createHash("sha256").update(data).digest("hex");
}

export function sha512(data: Uint8Array | string): string {
  return "sha512:" + createHash("sha512").update(data).digest("hex");
}

export function bytes(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text);
}

/** A registry on fresh memory storage with a fixed secret. */
export function makeRegistry(options: Partial<RegistryOptions> = {}): Handler {
  return createRegistry({ storage: memoryStorage(), uploadSecret: "test-secret", ...options });
}

export function req(method: string, path: string, init: RequestInit = {}): Request {
  const url = path.startsWith("http") ? path : BASE + path;
  return new Request(url, { method, ...init, ...(init.body instanceof ReadableStream ? { duplex: "half" } : {}) } as RequestInit);
}

export async function errorCode(response: Response): Promise<string | undefined> {
  const body = (await response.json()) as { errors?: { code: string }[] };
  return body.errors?.[0]?.code;
}

/** Monolithic push: POST then PUT with the whole body. Returns the digest. */
export async function pushBlob(registry: Handler, name: string, data: Uint8Array<ArrayBuffer> | string): Promise<string> {
  const content = typeof data === "string" ? bytes(data) : data;
  const digest = sha256(content);
  const start = await registry(req("POST", `/v2/${name}/blobs/uploads/`));
  if (start.status !== 202) throw new Error(`POST ${start.status}`);
  const location = new URL(start.headers.get("location")!);
  location.searchParams.set("digest", digest);
  const put = await registry(req("PUT", location.href, { body: content, headers: { "content-type": "application/octet-stream" } }));
  if (put.status !== 201) throw new Error(`PUT ${put.status} ${await put.text()}`);
  return digest;
}

export interface PushedImage {
  manifest: string;
  digest: string;
  config: string;
  layer: string;
}

export function imageManifest(config: string, configSize: number, layers: { digest: string; size: number }[], mediaType = "application/vnd.oci.image.manifest.v1+json", extra: Record<string, unknown> = {}): string {
  const layerType = mediaType.includes("docker") ? "application/vnd.docker.image.rootfs.diff.tar.gzip" : "application/vnd.oci.image.layer.v1.tar+gzip";
  const configType = mediaType.includes("docker") ? "application/vnd.docker.container.image.v1+json" : mediaType.includes("container") ? "application/vnd.container.image.v1+json" : "application/vnd.oci.image.config.v1+json";
  return JSON.stringify({
    schemaVersion: 2,
    mediaType,
    config: { mediaType: configType, digest: config, size: configSize },
    layers: layers.map((l) => ({ mediaType: layerType, digest: l.digest, size: l.size })),
    ...extra,
  });
}

/** Push a config, one layer and a manifest under `tag`. */
export async function pushImage(registry: Handler, name: string, tag: string, seed = "x", mediaType = "application/vnd.oci.image.manifest.v1+json"): Promise<PushedImage> {
  const configText = JSON.stringify({ architecture: "amd64", os: "linux", seed });
  const layerText = `layer-bytes-${seed}`;
  const config = await pushBlob(registry, name, configText);
  const layer = await pushBlob(registry, name, layerText);
  const manifest = imageManifest(config, bytes(configText).byteLength, [{ digest: layer, size: bytes(layerText).byteLength }], mediaType);
  const put = await registry(req("PUT", `/v2/${name}/manifests/${tag}`, { body: manifest, headers: { "content-type": mediaType } }));
  if (put.status !== 201) throw new Error(`manifest PUT ${put.status} ${await put.text()}`);
  return { manifest, digest: sha256(manifest), config, layer };
}

export function expectApiVersion(response: Response): void {
  if (response.headers.get("docker-distribution-api-version") !== "registry/2.0") throw new Error("missing Docker-Distribution-Api-Version");
  if (response.headers.get("container-distribution-api-version") !== "registry/2.0") throw new Error("missing Container-Distribution-Api-Version");
}
