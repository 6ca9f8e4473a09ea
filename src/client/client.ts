/**
 * The registry client: the spec's pull and push flows on `fetch` only, with
 * challenge handling, stored logins, progress and cancellation.
 *
 * @module
 */
import { encodeBasic, memoryCredentialStore, registryKey, type CredentialStore } from "./credentials.js";
import { discard, errorFromResponse, RegistryClientError } from "./errors.js";
import { choosePlatform, isIndex, MANIFEST_ACCEPT, parseManifest, type ParsedManifest, type Platform } from "./manifest.js";
import { streamOf, type Descriptor, type LocalImageStore } from "./local-store.js";
import { apiUrl, parseImageReference, type ImageReference } from "./reference.js";
import { Transport } from "./transport.js";
import { digestOf, limitStream, verifying } from "./verify.js";

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The fetch to use (read on every call). Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Where logins are kept. Default: in memory. */
  credentials?: CredentialStore;
  /** `User-Agent` of every request. */
  userAgent?: string;
  /** Renew tokens this many seconds before they expire. Default 10. */
  renewBeforeSeconds?: number;
  /** The clock, for tests. */
  now?: () => number;
}

/** Progress of one blob during a pull or push. */
export interface ProgressEvent {
  /** The blob's digest. */
  digest: string;
  /** Bytes transferred so far. */
  done: number;
  /** Total bytes. */
  total: number;
  /** `skipped` when the blob was already present (or mounted). */
  state: "started" | "progress" | "done" | "skipped";
}

/** Options shared by pull and push. */
export interface TransferOptions {
  /** Called for every blob as it starts, progresses, finishes or is skipped. */
  onProgress?: (event: ProgressEvent) => void;
  /** Aborts the transfer. */
  signal?: AbortSignal;
}

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

/** A client made by {@link createClient}. */
export interface RegistryClient {
  /**
   * Check credentials against a registry (`GET /v2/` through the challenge
   * flow) and keep them for later requests. Throws on wrong credentials.
   */
  login(registry: string, username: string, password: string): Promise<void>;
  /** Forget the stored login of a registry. */
  logout(registry: string): Promise<void>;
  /** Fetch a manifest's exact bytes, verified against its digest. */
  getManifest(ref: ImageReference | string, options?: { signal?: AbortSignal }): Promise<ParsedManifest>;
  /** Whether a blob exists in a repository (`HEAD`). */
  hasBlob(ref: ImageReference | string, digest: string, options?: { signal?: AbortSignal }): Promise<boolean>;
  /** Pull an image into a local store: only the layers it does not have. */
  pull(ref: ImageReference | string, store: LocalImageStore, options?: PullOptions): Promise<PullResult>;
  /** Push an image from a local store: layers first, then the manifest. */
  push(ref: ImageReference | string, store: LocalImageStore, options?: PushOptions): Promise<PushResult>;
  /** The underlying authenticated transport (for custom requests). */
  readonly transport: Transport;
}

/**
 * Check a response's status: on one of `ok`, discard the body and return the
 * response; otherwise throw the typed error read from its body.
 */
async function expectStatus(response: Response, ok: readonly number[], what: string): Promise<Response> {
  if (!ok.includes(response.status)) throw await errorFromResponse(response, what);
  discard(response);
  return response;
}

/**
 * Bytes the server holds, from an upload status `Range: 0-<last>`. Registries
 * write `0-0` for an empty upload (as Distribution does), so `0-0` counts as
 * empty: a one-byte upload is then re-sent whole, which is always safe.
 */
function storedBytes(range: string | null): number {
  const match = /^(?:bytes=)?0-(\d+)$/.exec(range?.trim() ?? "");
  const last = match ? Number(match[1]) : 0;
  return last > 0 ? last + 1 : 0;
}

/** Create a registry client. */
export function createClient(options: ClientOptions = {}): RegistryClient {
  const credentials = options.credentials ?? memoryCredentialStore();
  const transport = new Transport({
    fetch: options.fetch,
    credentials,
    userAgent: options.userAgent ?? "registry-kit-client",
    renewBeforeSeconds: options.renewBeforeSeconds,
    now: options.now,
  });
  const toRef = (ref: ImageReference | string): ImageReference => (typeof ref === "string" ? parseImageReference(ref) : ref);
  const pullScope = (repository: string) => [`repository:${repository}:pull`];
  const pushScope = (repository: string) => [`repository:${repository}:pull,push`];

  async function getManifest(input: ImageReference | string, opts: { signal?: AbortSignal } = {}): Promise<ParsedManifest> {
    const ref = toRef(input);
    const response = await transport.send({
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

  async function hasBlob(input: ImageReference | string, digest: string, opts: { signal?: AbortSignal } = {}): Promise<boolean> {
    const ref = toRef(input);
    const response = await transport.send({
      method: "HEAD",
      url: apiUrl(ref, `v2/${ref.repository}/blobs/${digest}`),
      scopes: pullScope(ref.repository),
      signal: opts.signal,
    });
    if (response.status === 404) return false;
    if (!response.ok) throw await errorFromResponse(response, `blob ${digest}`);
    return true;
  }

  async function downloadBlob(ref: ImageReference, blob: Descriptor, store: LocalImageStore, opts: TransferOptions): Promise<void> {
    const response = await transport.send({
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

  async function pull(input: ImageReference | string, store: LocalImageStore, opts: PullOptions = {}): Promise<PullResult> {
    const ref = toRef(input);
    let manifest = await getManifest(ref, opts);
    if (isIndex(manifest.mediaType)) {
      const child = choosePlatform(manifest, opts.platform ?? { os: "linux", architecture: "amd64" });
      manifest = await getManifest({ ...ref, reference: child.digest }, opts);
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
      await downloadBlob(ref, blob, store, opts);
      downloaded.push(blob.digest);
    }
    if (!(await store.hasBlob(manifest.digest))) await store.putBlob(manifest.digest, streamOf(manifest.bytes));
    await store.setName(opts.name ?? ref.reference, descriptor);
    return { manifest: descriptor, imageId: manifest.config?.digest, alreadyPresent: downloaded.length === 0, downloaded, skipped };
  }

  async function push(input: ImageReference | string, store: LocalImageStore, opts: PushOptions = {}): Promise<PushResult> {
    const ref = toRef(input);
    const local = await store.resolveName(opts.name ?? ref.reference);
    if (!local) throw new RegistryClientError("MANIFEST_UNKNOWN", `no local image named ${opts.name ?? ref.reference}`, 0);
    const result: PushResult = { digest: local.digest, uploaded: [], skipped: [], mounted: [] };
    await pushManifest(ref, local, ref.reference, store, opts, result);
    return result;
  }

  async function readLocal(store: LocalImageStore, digest: string): Promise<Uint8Array> {
    const stream = await store.getBlob(digest);
    if (!stream) throw new RegistryClientError("BLOB_UNKNOWN", `local blob ${digest} is missing`, 0);
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  async function pushManifest(ref: ImageReference, local: Descriptor, reference: string, store: LocalImageStore, opts: PushOptions, result: PushResult): Promise<void> {
    const bytes = await readLocal(store, local.digest);
    const manifest = parseManifest(bytes, local.digest, local.mediaType);
    for (const child of manifest.manifests) await pushManifest(ref, child, child.digest, store, opts, result);
    for (const blob of [...(manifest.config ? [manifest.config] : []), ...manifest.layers]) {
      await pushBlob(ref, blob, store, opts, result);
    }
    const response = await transport.send({
      method: "PUT",
      url: apiUrl(ref, `v2/${ref.repository}/manifests/${reference}`),
      headers: { "content-type": manifest.mediaType || local.mediaType },
      body: () => bytes.slice(),
      scopes: pushScope(ref.repository),
      signal: opts.signal,
    });
    await expectStatus(response, [200, 201], `manifest ${ref.repository}:${reference}`);
  }

  async function pushBlob(ref: ImageReference, blob: Descriptor, store: LocalImageStore, opts: PushOptions, result: PushResult): Promise<void> {
    // The spec's "avoiding repeated layer upload": HEAD first.
    if (await hasBlob(ref, blob.digest, opts)) {
      result.skipped.push(blob.digest);
      opts.onProgress?.({ digest: blob.digest, done: blob.size, total: blob.size, state: "skipped" });
      return;
    }
    for (const from of opts.mountFrom ?? []) {
      const response = await transport.send({
        method: "POST",
        url: apiUrl(ref, `v2/${ref.repository}/blobs/uploads/?mount=${encodeURIComponent(blob.digest)}&from=${encodeURIComponent(from)}`),
        scopes: [...pushScope(ref.repository), ...pullScope(from)],
        signal: opts.signal,
      });
      discard(response);
      if (response.status === 201) {
        result.mounted.push(blob.digest);
        opts.onProgress?.({ digest: blob.digest, done: blob.size, total: blob.size, state: "skipped" });
        return;
      }
      if (response.status === 202) {
        // Not mountable from there: the registry opened a session we do not need.
        const location = response.headers.get("location");
        if (location) await cancelUpload(ref, new URL(location, apiUrl(ref, "v2/")), opts);
      }
    }
    await uploadBlob(ref, blob, store, opts);
    result.uploaded.push(blob.digest);
  }

  async function cancelUpload(ref: ImageReference, location: URL, opts: TransferOptions): Promise<void> {
    const response = await transport.send({ method: "DELETE", url: location, scopes: pushScope(ref.repository), signal: opts.signal });
    discard(response);
  }

  async function startUpload(ref: ImageReference, opts: TransferOptions): Promise<URL> {
    const response = await transport.send({
      method: "POST",
      url: apiUrl(ref, `v2/${ref.repository}/blobs/uploads/`),
      scopes: pushScope(ref.repository),
      signal: opts.signal,
    });
    await expectStatus(response, [202], `starting an upload to ${ref.repository}`);
    const location = response.headers.get("location");
    if (!location) throw new RegistryClientError("BLOB_UPLOAD_INVALID", "the registry gave no upload Location", response.status);
    return new URL(location, response.url || apiUrl(ref, "v2/"));
  }

  async function uploadBlob(ref: ImageReference, blob: Descriptor, store: LocalImageStore, opts: PushOptions): Promise<void> {
    const report = (done: number, state: ProgressEvent["state"] = "progress") =>
      opts.onProgress?.({ digest: blob.digest, done, total: blob.size, state });
    const open = async (offset: number) => {
      const stream = await store.getBlob(blob.digest, offset);
      if (!stream) throw new RegistryClientError("BLOB_UNKNOWN", `local blob ${blob.digest} is missing`, 0);
      return stream;
    };
    report(0, "started");
    let location = await startUpload(ref, opts);
    const finish = (url: URL, body?: () => Promise<BodyInit | null>, length = 0) => {
      const target = new URL(url);
      target.searchParams.set("digest", blob.digest);
      return transport.send({
        method: "PUT",
        url: target,
        headers: { "content-type": "application/octet-stream", "content-length": String(length) },
        body,
        scopes: pushScope(ref.repository),
        signal: opts.signal,
      });
    };

    if (!opts.chunkSize) {
      await expectStatus(await finish(location, () => open(0), blob.size), [201], `uploading ${blob.digest}`);
      report(blob.size, "done");
      return;
    }

    let offset = 0;
    let failures = 0;
    while (offset < blob.size) {
      const length = Math.min(opts.chunkSize, blob.size - offset);
      const start = offset;
      try {
        const response = await transport.send({
          method: "PATCH",
          url: location,
          headers: {
            "content-type": "application/octet-stream",
            "content-range": `${start}-${start + length - 1}`,
            "content-length": String(length),
          },
          body: async () => limitStream(await open(start), length),
          scopes: pushScope(ref.repository),
          signal: opts.signal,
        });
        await expectStatus(response, [202], `uploading a chunk of ${blob.digest}`);
        const next = response.headers.get("location");
        if (next) location = new URL(next, location);
        offset = start + length;
        report(offset);
      } catch (error) {
        if (opts.signal?.aborted || ++failures > (opts.retries ?? 3)) throw error;
        // Resume from what the server has (the upload status `Range`).
        const status = await transport.send({ method: "GET", url: location, scopes: pushScope(ref.repository), signal: opts.signal });
        discard(status);
        if (status.status !== 204) throw error;
        offset = storedBytes(status.headers.get("range"));
        const next = status.headers.get("location");
        if (next) location = new URL(next, location);
      }
    }
    await expectStatus(await finish(location), [201], `completing the upload of ${blob.digest}`);
    report(blob.size, "done");
  }

  return {
    transport,
    getManifest,
    hasBlob,
    pull,
    push,
    async login(registry, username, password) {
      const key = registryKey(registry);
      const previous = await credentials.get(key);
      await credentials.set(key, encodeBasic(username, password));
      transport.reset();
      try {
        const response = await transport.send({ method: "GET", url: apiUrl({ registry }, "v2/"), scopes: [] });
        await expectStatus(response, [200], `login to ${key}`);
      } catch (error) {
        if (previous === undefined) await credentials.delete(key);
        else await credentials.set(key, previous);
        transport.reset();
        throw error;
      }
    },
    async logout(registry) {
      await credentials.delete(registryKey(registry));
      transport.reset();
    },
  };
}
