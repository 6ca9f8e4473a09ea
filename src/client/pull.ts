/**
 * The spec's pull flow: fetch the manifest (verified against its digest),
 * pick a platform from an index, and download only the blobs the local store
 * lacks, each verified as it streams in.
 *
 * @module
 */
import { pullScope, toRef, type ClientContext, type TransferOptions } from "./context.js";
import { errorFromResponse, RegistryClientError } from "./errors.js";
import { streamOf, type Descriptor, type LocalImageStore } from "./local-store.js";
import { choosePlatform, isIndex, MANIFEST_ACCEPT, parseManifest, type ParsedManifest, type Platform } from "./manifest.js";
import { apiUrl, type ImageReference } from "./reference.js";
import { digestOf, verifying } from "./verify.js";

/** Options of {@link RegistryClient.pull}. */
export interface PullOptions extends TransferOptions {
  /** The platform to pick from an index. Default `linux/amd64`. */
  platform?: Platform;
  /** The local name to give the image. Default: the reference's tag or digest. */
  name?: string;
}

/** What a pull did. */
export interface PullResult {
  /** The manifest that was stored (the platform's, for an index). */
  manifest: Descriptor;
  /** The image id: the config digest. */
  imageId: string | undefined;
  /** True when the image was already present and nothing was downloaded. */
  alreadyPresent: boolean;
  /** Blobs downloaded and blobs that were present. */
  downloaded: string[];
  /** Blobs that were already in the store. */
  skipped: string[];
}

/** Fetch a manifest's exact bytes, verified against the reference's digest or the one the registry served. */
export async function getManifest(ctx: ClientContext, input: ImageReference | string, opts: { signal?: AbortSignal } = {}): Promise<ParsedManifest> {
  const ref = toRef(input);
  const response = await ctx.transport.send({
    method: "GET",
    url: apiUrl(ref, `v2/${ref.repository}/manifests/${ref.reference}`),
    headers: { accept: MANIFEST_ACCEPT },
    scopes: pullScope(ref.repository),
    signal: opts.signal,
  });
  if (!response.ok) throw await errorFromResponse(response, `manifest ${ref.repository}:${ref.reference}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const served = response.headers.get("docker-content-digest") ?? response.headers.get("container-content-digest");
  const expected = ref.reference.includes(":") ? ref.reference : served ?? undefined;
  const algorithm = expected?.startsWith("sha512:") ? "sha512" : "sha256";
  const digest = digestOf(bytes, algorithm);
  if (expected && digest !== expected) {
    throw new RegistryClientError("DIGEST_INVALID", `manifest ${ref.repository}:${ref.reference} hashes to ${digest}, expected ${expected}`, 0);
  }
  return parseManifest(bytes, digest, response.headers.get("content-type") ?? undefined);
}

/** Whether a blob exists in a repository (`HEAD`). */
export async function hasBlob(ctx: ClientContext, input: ImageReference | string, digest: string, opts: { signal?: AbortSignal } = {}): Promise<boolean> {
  const ref = toRef(input);
  const response = await ctx.transport.send({
    method: "HEAD",
    url: apiUrl(ref, `v2/${ref.repository}/blobs/${digest}`),
    scopes: pullScope(ref.repository),
    signal: opts.signal,
  });
  if (response.status === 404) return false;
  if (!response.ok) throw await errorFromResponse(response, `blob ${digest}`);
  return true;
}

/** Pull an image into a local store: only the layers it does not have. */
export async function pull(ctx: ClientContext, input: ImageReference | string, store: LocalImageStore, opts: PullOptions = {}): Promise<PullResult> {
  const ref = toRef(input);
  let manifest = await getManifest(ctx, ref, opts);
  if (isIndex(manifest.mediaType)) {
    const child = choosePlatform(manifest, opts.platform ?? { os: "linux", architecture: "amd64" });
    manifest = await getManifest(ctx, { ...ref, reference: child.digest }, opts);
  }
  const descriptor: Descriptor = { mediaType: manifest.mediaType, digest: manifest.digest, size: manifest.bytes.byteLength };
  const blobs = [...(manifest.config ? [manifest.config] : []), ...manifest.layers];
  const downloaded: string[] = [];
  const skipped: string[] = [];
  // The spec's step 2: the config digest is the image id; if it is here with its layers, stop.
  const present = await Promise.all(blobs.map((b) => store.hasBlob(b.digest)));
  for (const [i, blob] of blobs.entries()) {
    if (present[i]) {
      skipped.push(blob.digest);
      opts.onProgress?.({ digest: blob.digest, done: blob.size, total: blob.size, state: "skipped" });
      continue;
    }
    await downloadBlob(ctx, ref, blob, store, opts);
    downloaded.push(blob.digest);
  }
  if (!(await store.hasBlob(manifest.digest))) await store.putBlob(manifest.digest, streamOf(manifest.bytes));
  await store.setName(opts.name ?? ref.reference, descriptor);
  return { manifest: descriptor, imageId: manifest.config?.digest, alreadyPresent: downloaded.length === 0, downloaded, skipped };
}

async function downloadBlob(ctx: ClientContext, ref: ImageReference, blob: Descriptor, store: LocalImageStore, opts: TransferOptions): Promise<void> {
  const response = await ctx.transport.send({
    method: "GET",
    url: apiUrl(ref, `v2/${ref.repository}/blobs/${blob.digest}`),
    scopes: pullScope(ref.repository),
    signal: opts.signal,
  });
  if (!response.ok || !response.body) throw await errorFromResponse(response, `blob ${blob.digest}`);
  opts.onProgress?.({ digest: blob.digest, done: 0, total: blob.size, state: "started" });
  const checked = response.body.pipeThrough(
    verifying(blob.digest, blob.size, (done) => opts.onProgress?.({ digest: blob.digest, done, total: blob.size, state: "progress" })),
    { signal: opts.signal },
  );
  await store.putBlob(blob.digest, checked);
  opts.onProgress?.({ digest: blob.digest, done: blob.size, total: blob.size, state: "done" });
}
