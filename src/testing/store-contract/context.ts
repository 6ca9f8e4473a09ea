/**
 * What the sections of the store contract share: the stores under test
 * (fresh for every test) and helpers that push through them.
 *
 * @module
 */
import { parseDigest, type Digest } from "../../oci/digest.js";
import { RegistryError } from "../../oci/errors.js";
import { digestBytes } from "../../oci/hash.js";
import { parseManifest } from "../../registry/manifest-document.js";
import { DEFAULT_MANIFEST_MEDIA_TYPES } from "../../oci/wire.js";
import type { RegistryStores, StoreCall } from "../../registry/stores/types.js";

/** What each section of the contract gets. */
export interface StoreContractContext {
  /** The stores of the running test. */
  stores(): RegistryStores;
  /** The call every method gets (no request: a wrapper must work without one). */
  readonly call: StoreCall;
  /** Upload `content` into `name` as one blob; resolves to its digest. */
  pushBlob(name: string, content: string | Uint8Array): Promise<Digest>;
  /** Push an image (config, one layer, manifest; `tag` when given) into `name`. */
  pushImage(name: string, seed: string, tag?: string, extra?: Record<string, unknown>): Promise<PushedImage>;
  /** The error `promise` rejects with, checked to be a `RegistryError`. */
  registryError(promise: Promise<unknown>): Promise<RegistryError>;
}

/** An image pushed by {@link StoreContractContext.pushImage}. */
export interface PushedImage {
  digest: Digest;
  bytes: Uint8Array;
  config: Digest;
  layer: Digest;
  created: boolean;
}

const encoder = new TextEncoder();
const ACCEPTED = new Set(DEFAULT_MANIFEST_MEDIA_TYPES);

/** Digest (sha256) of `content`. */
export function digestOf(content: string | Uint8Array): Digest {
  return parseDigest(digestBytes("sha256", typeof content === "string" ? encoder.encode(content) : content));
}

/** The bytes of `content`. */
export function bytesOf(content: string | Uint8Array): Uint8Array {
  return typeof content === "string" ? encoder.encode(content) : content;
}

/** A stream of `bytes`. */
export function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({ start(controller) { controller.enqueue(bytes); controller.close(); } });
}

/** Read `stream` whole. */
export async function readAllBytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export function storeContractContext(current: () => RegistryStores): StoreContractContext {
  const call: StoreCall = {};
  const pushBlob = async (name: string, content: string | Uint8Array): Promise<Digest> => {
    const stores = current();
    const bytes = bytesOf(content);
    const digest = digestOf(bytes);
    const session = await stores.uploads.start(name, call);
    const appended = await stores.uploads.append(name, session, streamOf(bytes), { expectedSize: 0, algorithm: "sha256" }, call);
    await stores.uploads.commit(name, session, digest, appended.digest === undefined ? { size: appended.size } : { size: appended.size, computed: appended.digest }, call);
    return digest;
  };
  return {
    stores: current,
    call,
    pushBlob,
    async pushImage(name, seed, tag, extra = {}) {
      const configText = JSON.stringify({ architecture: "amd64", os: "linux", seed });
      const layerText = `layer-${seed}`;
      const config = await pushBlob(name, configText);
      const layer = await pushBlob(name, layerText);
      const bytes = encoder.encode(JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: config.value, size: encoder.encode(configText).byteLength },
        layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: layer.value, size: encoder.encode(layerText).byteLength }],
        ...extra,
      }));
      const digest = digestOf(bytes);
      const manifest = parseManifest(bytes, "application/vnd.oci.image.manifest.v1+json", ACCEPTED);
      const { created } = await current().manifests.put(name, tag === undefined ? { digest, bytes, manifest } : { digest, bytes, manifest, tag }, call);
      return { digest, bytes, config, layer, created };
    },
    async registryError(promise) {
      try {
        await promise;
      } catch (error) {
        if (error instanceof RegistryError) return error;
        throw new Error(`expected a RegistryError, got ${String(error)}`);
      }
      throw new Error("expected a RegistryError, the call succeeded");
    },
  };
}
