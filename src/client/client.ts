/**
 * The registry client: the spec's pull and push flows on `fetch` only, with
 * challenge handling, stored logins, progress and cancellation. The flows
 * live in `pull.ts`, `push.ts` and `upload.ts` over a `ClientContext`;
 * this module binds them to one transport and adds login and logout.
 *
 * @module
 */
import { expectStatus, type ClientContext } from "./context.js";
import { encodeBasic, memoryCredentialStore, registryKey, type CredentialStore } from "./credentials.js";
import type { LocalImageStore } from "./local-store.js";
import type { ParsedManifest } from "./manifest.js";
import { getManifest, hasBlob, pull, type PullOptions, type PullResult } from "./pull.js";
import { push, type PushOptions, type PushResult } from "./push.js";
import { apiUrl, type ImageReference } from "./reference.js";
import { Transport } from "./transport.js";

export type { ProgressEvent, TransferOptions } from "./context.js";
export type { PullOptions, PullResult } from "./pull.js";
export type { PushOptions, PushResult } from "./push.js";

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
  const ctx: ClientContext = { transport };
  return {
    transport,
    getManifest: (ref, opts) => getManifest(ctx, ref, opts),
    hasBlob: (ref, digest, opts) => hasBlob(ctx, ref, digest, opts),
    pull: (ref, store, opts) => pull(ctx, ref, store, opts),
    push: (ref, store, opts) => push(ctx, ref, store, opts),
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
