/**
 * The spec's push flow: children of an index first, then each manifest's
 * blobs (skipped when the registry has them, mounted when asked and possible,
 * uploaded otherwise), then the manifest itself.
 *
 * @module
 */
import { expectStatus, pullScope, pushScope, toRef, type ClientContext, type TransferOptions } from "./context.js";
import { discard, RegistryClientError } from "./errors.js";
import type { Descriptor, LocalImageStore } from "./local-store.js";
import { parseManifest } from "./manifest.js";
import { hasBlob } from "./pull.js";
import { apiUrl, type ImageReference } from "./reference.js";
import { cancelUpload, uploadBlob } from "./upload.js";

/** Options of {@link RegistryClient.push}. */
export interface PushOptions extends TransferOptions {
  /** The local name of the image to push. Default: the reference's tag. */
  name?: string;
  /**
   * Upload in chunks of this many bytes (POST, PATCH…, PUT). Default: one
   * monolithic PUT per blob.
   */
  chunkSize?: number;
  /** How many times a failed chunk is resumed from the server's `Range`. Default 3. */
  retries?: number;
  /**
   * Repositories (on the same registry) to mount blobs from. By default the
   * client never mounts, as in the spec: shared layers are uploaded once per repository.
   */
  mountFrom?: string[];
}

/** What a push did. */
export interface PushResult {
  /** The manifest digest the registry stored. */
  digest: string;
  /** Blobs whose bytes were sent. */
  uploaded: string[];
  /** Blobs the registry already had (`HEAD` 200). */
  skipped: string[];
  /** Blobs mounted from another repository. */
  mounted: string[];
}

/** Push an image from a local store: layers first, then the manifest. */
export async function push(ctx: ClientContext, input: ImageReference | string, store: LocalImageStore, opts: PushOptions = {}): Promise<PushResult> {
  const ref = toRef(input);
  const local = await store.resolveName(opts.name ?? ref.reference);
  if (!local) throw new RegistryClientError("MANIFEST_UNKNOWN", `no local image named ${opts.name ?? ref.reference}`, 0);
  const result: PushResult = { digest: local.digest, uploaded: [], skipped: [], mounted: [] };
  await pushManifest(ctx, ref, local, ref.reference, store, opts, result);
  return result;
}

async function readLocal(store: LocalImageStore, digest: string): Promise<Uint8Array> {
  const stream = await store.getBlob(digest);
  if (!stream) throw new RegistryClientError("BLOB_UNKNOWN", `local blob ${digest} is missing`, 0);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function pushManifest(
  ctx: ClientContext,
  ref: ImageReference,
  local: Descriptor,
  reference: string,
  store: LocalImageStore,
  opts: PushOptions,
  result: PushResult,
): Promise<void> {
  const bytes = await readLocal(store, local.digest);
  const manifest = parseManifest(bytes, local.digest, local.mediaType);
  for (const child of manifest.manifests) await pushManifest(ctx, ref, child, child.digest, store, opts, result);
  for (const blob of [...(manifest.config ? [manifest.config] : []), ...manifest.layers]) {
    await pushBlob(ctx, ref, blob, store, opts, result);
  }
  const response = await ctx.transport.send({
    method: "PUT",
    url: apiUrl(ref, `v2/${ref.repository}/manifests/${reference}`),
    headers: { "content-type": manifest.mediaType || local.mediaType },
    body: () => bytes.slice(),
    scopes: pushScope(ref.repository),
    signal: opts.signal,
  });
  await expectStatus(response, [200, 201], `manifest ${ref.repository}:${reference}`);
}

async function pushBlob(ctx: ClientContext, ref: ImageReference, blob: Descriptor, store: LocalImageStore, opts: PushOptions, result: PushResult): Promise<void> {
  // The spec's "avoiding repeated layer upload": HEAD first.
  if (await hasBlob(ctx, ref, blob.digest, opts)) {
    result.skipped.push(blob.digest);
    opts.onProgress?.({ digest: blob.digest, done: blob.size, total: blob.size, state: "skipped" });
    return;
  }
  if (await mountBlob(ctx, ref, blob, opts)) {
    result.mounted.push(blob.digest);
    opts.onProgress?.({ digest: blob.digest, done: blob.size, total: blob.size, state: "skipped" });
    return;
  }
  await uploadBlob(ctx, ref, blob, store, opts);
  result.uploaded.push(blob.digest);
}

/** Try each of `opts.mountFrom` in turn; true when the registry mounted the blob (201). */
async function mountBlob(ctx: ClientContext, ref: ImageReference, blob: Descriptor, opts: PushOptions): Promise<boolean> {
  for (const from of opts.mountFrom ?? []) {
    const response = await ctx.transport.send({
      method: "POST",
      url: apiUrl(ref, `v2/${ref.repository}/blobs/uploads/?mount=${encodeURIComponent(blob.digest)}&from=${encodeURIComponent(from)}`),
      scopes: [...pushScope(ref.repository), ...pullScope(from)],
      signal: opts.signal,
    });
    discard(response);
    if (response.status === 201) return true;
    if (response.status === 202) {
      // Not mountable from there: the registry opened a session we do not need.
      const location = response.headers.get("location");
      if (location) await cancelUpload(ctx, ref, new URL(location, apiUrl(ref, "v2/")), opts);
    }
  }
  return false;
}
