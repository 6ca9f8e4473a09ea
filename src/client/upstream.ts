/**
 * `registryUpstream`: an upstream registry for the pull-through cache of
 * `createRegistry({ pullThrough })`, spoken to over HTTP through the client's
 * transport: anonymous, Basic, or the Bearer token flow (challenge, token
 * endpoint, one scope per repository, tokens reused until shortly before they
 * expire); credentials go only to realms on the upstream's origin or
 * configured (realms.ts). It fetches; the registry verifies and stores.
 *
 * @module
 */
import { silent, type LogHook } from "../http/log.js";
import { readAll } from "../util/streams.js";
import { encodeBasic, registryKey, type CredentialStore } from "./credentials.js";
import { RegistryClientError, discard, errorFromResponse } from "./errors.js";
import { MANIFEST_ACCEPT } from "./manifest.js";
import { realmPolicy, trustedRealms } from "./realms.js";
import { Transport } from "./transport.js";

/** A user name and password for an upstream registry (or its token endpoint). */
export interface UpstreamCredentials {
  /** The user name sent to the upstream (Basic, or to its token service). */
  username: string;
  /** Its password; never logged. */
  password: string;
}

/** Options of {@link registryUpstream}. */
export interface RegistryUpstreamOptions {
  /** The upstream's base URL, e.g. `https://registry-1.docker.io` (no `/v2/`). */
  url: string;
  /**
   * Credentials: fixed, or a callback asked before every upstream request (to
   * rotate secrets, or pick them per registry). Absent: anonymous.
   */
  credentials?: UpstreamCredentials | ((upstream: { registry: string }) => UpstreamCredentials | undefined | Promise<UpstreamCredentials | undefined>);
  /** Give up on an upstream request whose response headers (for manifests: whole response) take longer. Default 30 s. */
  timeoutSeconds?: number;
  /** Largest manifest read from the upstream. Default 4 MiB. */
  maxManifestBytes?: number;
  /** The fetch to use. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** `User-Agent` of upstream requests. Default `registry-kit-proxy`. */
  userAgent?: string;
  /**
   * Token realms besides the upstream's own origin that may receive
   * `credentials`, as URLs (`https://auth.docker.io/token`; a path ending in
   * `/` covers every path under it). A challenge naming any other realm gets
   * a token request without credentials, and a `warn` log event. Docker Hub
   * (`https://registry-1.docker.io`) needs `["https://auth.docker.io/token"]`.
   */
  realms?: readonly string[];
  /** Receives the refused realms (one `warn` each). Default: dropped. */
  log?: LogHook;
}

/** What {@link registryUpstream} returns: the `Upstream` contract of `registry-kit/registry`. */
export interface RegistryUpstream {
  /** `HEAD /v2/<name>/manifests/<reference>`; `undefined` when the upstream does not know it. */
  headManifest(name: string, reference: string, signal?: AbortSignal): Promise<{
    /** The upstream's `Docker-Content-Digest`. */
    digest: string;
    /** Its `Content-Type`. */
    mediaType?: string;
    /** Its `Content-Length`. */
    size?: number;
  } | undefined>;
  /** `GET /v2/<name>/manifests/<reference>` (at most `maxManifestBytes`); `undefined` when unknown upstream. */
  getManifest(name: string, reference: string, signal?: AbortSignal): Promise<{
    /** The manifest, byte for byte. */
    bytes: Uint8Array;
    /** Its `Content-Type`. */
    mediaType: string;
    /** The upstream's `Docker-Content-Digest`, when sent. */
    digest?: string;
  } | undefined>;
  /** `HEAD /v2/<name>/blobs/<digest>`; `undefined` when unknown upstream. */
  headBlob(name: string, digest: string, signal?: AbortSignal): Promise<{
    /** Its `Content-Length`, when sent. */
    size?: number;
  } | undefined>;
  /** `GET /v2/<name>/blobs/<digest>`; the caller reads or cancels the body. `undefined` when unknown upstream. */
  getBlob(name: string, digest: string, signal?: AbortSignal): Promise<{
    /** The blob's bytes, as they arrive. */
    body: ReadableStream<Uint8Array>;
    /** Its `Content-Length`, when sent. */
    size?: number;
  } | undefined>;
}

/**
 * An upstream registry for `createRegistry({ pullThrough: { upstreams: [{ prefix, upstream }] } })`.
 * 404 answers `undefined`; any other failure (network, timeout, refused login,
 * 5xx, 429) throws a `RegistryClientError` whose `status` is the HTTP status
 * (0 when there was none). A repository refused to the account (403, or 401
 * `insufficient_scope`) throws one with `refused: "repository"` too, which the
 * cache answers 403 `DENIED`.
 */
export function registryUpstream(options: RegistryUpstreamOptions): RegistryUpstream {
  const base = new URL(options.url);
  if (base.protocol !== "http:" && base.protocol !== "https:") throw new TypeError("upstream url must be http: or https:");
  const timeoutMs = (options.timeoutSeconds ?? 30) * 1000;
  const maxManifestBytes = options.maxManifestBytes ?? 4 * 1024 * 1024;
  const realmAllowed = realmPolicy(base, trustedRealms(options.realms ?? []), options.log ?? silent);
  const credentials = upstreamCredentials(registryKey(base), options.credentials);
  const transport = new Transport({ credentials, realmAllowed, userAgent: options.userAgent ?? "registry-kit-proxy", ...(options.fetch ? { fetch: options.fetch } : {}) });

  /** Send with a timeout that covers the headers; `keep` extends it over the body too. */
  const send = async (method: string, name: string, path: string, accept: string | undefined, signal: AbortSignal | undefined, what: string) => {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new RegistryClientError("TIMEOUT", `${what}: no answer within ${timeoutMs} ms`, 0)), timeoutMs);
    const onAbort = () => timeout.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    try {
      const url = new URL(`${base.pathname.replace(/\/$/, "")}/v2/${name}/${path}`, base);
      const response = await transport.send({ method, url, headers: accept ? { accept } : undefined, scopes: [`repository:${name}:pull`], signal: timeout.signal });
      return { response, done };
    } catch (error) {
      done();
      if (timeout.signal.aborted && timeout.signal.reason instanceof RegistryClientError) throw timeout.signal.reason;
      if (error instanceof RegistryClientError) throw error;
      throw new RegistryClientError("UNREACHABLE", `${what}: ${error instanceof Error ? error.message : String(error)}`, 0);
    }
  };
  return {
    async headManifest(name, reference, signal) {
      const what = `upstream HEAD ${name}:${reference}`;
      const { response, done } = await send("HEAD", name, `manifests/${reference}`, MANIFEST_ACCEPT, signal, what);
      try {
        if (!(await expectOk(response, what))) return undefined;
        discard(response);
        const digest = response.headers.get("docker-content-digest");
        if (!digest) throw new RegistryClientError("DIGEST_MISSING", `${what}: no Docker-Content-Digest`, 502);
        const mediaType = response.headers.get("content-type") ?? undefined;
        const size = sizeOf(response);
        return { digest, ...(mediaType ? { mediaType } : {}), ...(size !== undefined ? { size } : {}) };
      } finally {
        done();
      }
    },
    async getManifest(name, reference, signal) {
      const what = `upstream GET ${name}:${reference}`;
      const { response, done } = await send("GET", name, `manifests/${reference}`, MANIFEST_ACCEPT, signal, what);
      try {
        if (!(await expectOk(response, what))) return undefined;
        const bytes = await readAll(response.body ?? new ReadableStream(), maxManifestBytes, () => new RegistryClientError("SIZE_INVALID", `${what}: manifest over ${maxManifestBytes} bytes`, 502));
        const mediaType = response.headers.get("content-type") ?? "";
        const digest = response.headers.get("docker-content-digest") ?? undefined;
        return { bytes, mediaType, ...(digest ? { digest } : {}) };
      } finally {
        done();
      }
    },
    async headBlob(name, digest, signal) {
      const what = `upstream HEAD ${name}@${digest}`;
      const { response, done } = await send("HEAD", name, `blobs/${digest}`, undefined, signal, what);
      done();
      if (!(await expectOk(response, what))) return undefined;
      discard(response);
      const size = sizeOf(response);
      return size === undefined ? {} : { size };
    },
    async getBlob(name, digest, signal) {
      const what = `upstream GET ${name}@${digest}`;
      const { response, done } = await send("GET", name, `blobs/${digest}`, undefined, signal, what);
      // A large blob may take as long as it takes, but never a whole timeout without a byte.
      done();
      if (!(await expectOk(response, what))) return undefined;
      if (!response.body) throw new RegistryClientError("BLOB_EMPTY", `${what}: no body`, 502);
      const size = sizeOf(response);
      return { body: idleLimited(response.body, timeoutMs, what), ...(size !== undefined ? { size } : {}) };
    },
  };
}

/** The upstream's credentials, as a store that offers them to `host` only and keeps nothing. */
function upstreamCredentials(host: string, given: RegistryUpstreamOptions["credentials"]): CredentialStore {
  return {
    async get(registry) {
      if (registry !== host || !given) return undefined;
      const c = typeof given === "function" ? await given({ registry }) : given;
      return c ? encodeBasic(c.username, c.password) : undefined;
    },
    async set() {},
    async delete() {},
  };
}

/** `false` for a 404 (its body discarded), `true` for a 200; any other answer throws its `RegistryClientError`. */
async function expectOk(response: Response, what: string): Promise<boolean> {
  if (response.status === 404) {
    discard(response);
    return false;
  }
  if (response.status !== 200) {
    const refused = refusesRepository(response);
    const error = await errorFromResponse(response, what);
    // The login worked (or was not needed), the repository is closed to this account: not a failure of ours.
    throw refused ? Object.assign(error, { refused: "repository" as const }) : error;
  }
  return true;
}

/** The `Content-Length` of `response` when it is a plain number. */
function sizeOf(response: Response): number | undefined {
  const value = response.headers.get("content-length");
  return value !== null && /^\d+$/.test(value) ? Number(value) : undefined;
}

/**
 * Whether the upstream refused the repository itself rather than the login:
 * a 403, or a 401 whose Bearer challenge says `insufficient_scope` (a valid
 * token without this repository, as Docker Hub answers for a private or
 * missing one). A 401 to Basic credentials or to a bad token is a failed login.
 */
function refusesRepository(response: Response): boolean {
  if (response.status === 403) return true;
  return response.status === 401 && /error="?insufficient_scope/i.test(response.headers.get("www-authenticate") ?? "");
}

/** `body`, failing with a `TIMEOUT` error when no chunk arrives for `ms` (a stalled upstream must not hold a fetch forever). */
function idleLimited(body: ReadableStream<Uint8Array>, ms: number, what: string): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const stalled = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new RegistryClientError("TIMEOUT", `${what}: no data for ${ms} ms`, 0)), ms);
        });
        try {
          const { done, value } = await Promise.race([reader.read(), stalled]);
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          void reader.cancel(error).catch(() => {});
          throw error;
        } finally {
          clearTimeout(timer);
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
