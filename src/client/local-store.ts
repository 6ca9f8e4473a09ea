/**
 * The local side of pull and push: where images are kept on the client. Modelled
 * on the OCI image layout: blobs by digest (layers, configs and manifests alike)
 * and names that point at manifests.
 *
 * @module
 */
import { streamOf } from "../util/streams.js";

export { streamOf };

/** An OCI content descriptor. */
export interface Descriptor {
  /** The content's media type. */
  mediaType: string;
  /** `sha256:<hex>` (or another algorithm) of the content. */
  digest: string;
  /** Size of the content in bytes. */
  size: number;
  /** OCI annotations. */
  annotations?: Record<string, string>;
  /** The platform of an index entry. */
  platform?: {
    /** e.g. `linux`. */
    os: string;
    /** e.g. `amd64`. */
    architecture: string;
    /** e.g. `v8`. */
    variant?: string;
  };
  /** The artifact type of an artifact manifest. */
  artifactType?: string;
}

/**
 * Local image storage used by {@link RegistryClient.pull} and
 * {@link RegistryClient.push}. An OCI layout directory on Node is
 * `ociLayoutStore` from `registry-kit/node`.
 */
export interface LocalImageStore {
  /** Whether the blob is present in full. */
  hasBlob(digest: string): Promise<boolean>;
  /** Size of a present blob. */
  blobSize(digest: string): Promise<number | undefined>;
  /**
   * Store a blob. The client passes a stream that errors if the bytes do not
   * match `digest`; the store must then keep nothing (write to a temporary and
   * rename, or equivalent).
   */
  putBlob(digest: string, data: ReadableStream<Uint8Array>): Promise<void>;
  /** Read a blob from `offset` (default 0), or `undefined` when absent. */
  getBlob(digest: string, offset?: number): Promise<ReadableStream<Uint8Array> | undefined>;
  /** Name a manifest (e.g. a tag). */
  setName(name: string, manifest: Descriptor): Promise<void>;
  /** The manifest a name points at. */
  resolveName(name: string): Promise<Descriptor | undefined>;
}

/** A {@link LocalImageStore} in memory, for tests and short scripts. */
export function memoryImageStore(): LocalImageStore & {
  /** The stored blobs by digest (for tests). */
  blobs: Map<string, Uint8Array>;
} {
  const blobs = new Map<string, Uint8Array>();
  const names = new Map<string, Descriptor>();
  return {
    blobs,
    async hasBlob(digest) {
      return blobs.has(digest);
    },
    async blobSize(digest) {
      return blobs.get(digest)?.byteLength;
    },
    async putBlob(digest, data) {
      const bytes = new Uint8Array(await new Response(data).arrayBuffer());
      blobs.set(digest, bytes);
    },
    async getBlob(digest, offset = 0) {
      const bytes = blobs.get(digest);
      return bytes && streamOf(bytes.subarray(offset));
    },
    async setName(name, manifest) {
      names.set(name, manifest);
    },
    async resolveName(name) {
      return names.get(name);
    },
  };
}
