/**
 * The authenticated request loop of the spec's client flow: send the request;
 * on `401`, read the challenge, get a token from the realm with `service` and
 * every `scope`, and repeat the request with `Authorization: Bearer`.
 * Request bodies are given as factories so a request can be repeated.
 *
 * @module
 */
import { parseChallenges } from "./challenge.js";
import { discard } from "./errors.js";
import { registryKey, type CredentialStore } from "./credentials.js";
import { TokenCache, type TokenEndpoint } from "./tokens.js";

/** How to authenticate to one registry, learned from its last challenge. */
type AuthScheme = { kind: "bearer"; endpoint: TokenEndpoint } | { kind: "basic" };

/** A request the transport can send again: the body comes from a factory. */
export interface RepeatableRequest {
  /** HTTP method. */
  method: string;
  /** Absolute URL. */
  url: URL;
  /** Request headers (without `Authorization`, which the transport adds). */
  headers?: HeadersInit;
  /** Called once per attempt; a stream must be fresh each time. */
  body?: () => BodyInit | null | Promise<BodyInit | null>;
  /** The scopes this request needs, e.g. `repository:library/alpine:pull`. */
  scopes: readonly string[];
  /** Cancels the request. */
  signal?: AbortSignal;
}

/** Options of {@link Transport}. */
export interface TransportOptions {
  /** The fetch to use; read on every call so test interceptors work. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  credentials: CredentialStore;
  userAgent?: string;
  renewBeforeSeconds?: number;
  now?: () => number;
  /**
   * Whether the stored credentials may go to this token realm (the `realm` of
   * a Bearer challenge, which the registry chooses). Default: every realm, as
   * container clients do with their own login; a refused realm is asked for
   * an anonymous token.
   */
  realmAllowed?: (realm: string) => boolean;
}

/** Sends registry requests with challenge handling and cached tokens. */
export class Transport {
  /** The token cache this transport uses. */
  readonly tokens: TokenCache;
  readonly #schemes = new Map<string, AuthScheme>();
  readonly #options: TransportOptions;

  constructor(options: TransportOptions) {
    this.#options = options;
    this.tokens = new TokenCache({
      fetch: () => this.fetchImpl,
      renewBeforeSeconds: options.renewBeforeSeconds,
      userAgent: options.userAgent,
      now: options.now,
    });
  }

  /** The fetch in use. */
  get fetchImpl(): typeof fetch {
    return this.#options.fetch ?? globalThis.fetch;
  }

  /** Forget what was learned about a registry's auth and its tokens. */
  reset(): void {
    this.#schemes.clear();
    this.tokens.clear();
  }

  /**
   * Send a request, answering at most one authentication challenge. Once a
   * registry's scheme is known, later requests carry credentials up front, so
   * streaming uploads are not sent twice.
   */
  async send(request: RepeatableRequest): Promise<Response> {
    const registry = registryKey(request.url);
    for (let attempt = 0; ; attempt++) {
      const headers = new Headers(request.headers);
      if (this.#options.userAgent) headers.set("user-agent", this.#options.userAgent);
      const scheme = this.#schemes.get(registry);
      if (scheme) await this.#authorize(headers, scheme, registry, request);
      const body = request.body ? await request.body() : null;
      // Called as a plain function: workerd's fetch throws "Illegal invocation" when its `this` is another object.
      const fetchImpl = this.fetchImpl;
      const response = await fetchImpl(request.url, {
        method: request.method,
        headers,
        body,
        signal: request.signal,
        // Node's fetch needs this for streaming request bodies.
        ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
      } as RequestInit);
      if (response.status !== 401 || attempt > 0) return response;

      const challenge = parseChallenges(response.headers.get("www-authenticate"))[0];
      if (!challenge) return response;
      if (challenge.scheme === "bearer" && challenge.params.realm) {
        const next: AuthScheme = { kind: "bearer", endpoint: { realm: challenge.params.realm, service: challenge.params.service } };
        if (scheme?.kind === "bearer") this.tokens.invalidate(scheme.endpoint, this.#scopesFor(request, undefined), (await this.#basicFor(registry, scheme.endpoint))?.account);
        this.#schemes.set(registry, next);
        request = { ...request, scopes: this.#scopesFor(request, challenge.params.scope) };
      } else if (challenge.scheme === "basic") {
        if (!(await this.#options.credentials.get(registry))) return response;
        this.#schemes.set(registry, { kind: "basic" });
      } else {
        return response;
      }
      discard(response);
    }
  }

  /** Our own scopes plus the ones the challenge named (space-separated). */
  #scopesFor(request: RepeatableRequest, challengeScope: string | undefined): string[] {
    const fromChallenge = challengeScope ? challengeScope.split(" ").filter(Boolean) : [];
    return [...new Set([...request.scopes, ...fromChallenge])];
  }

  /** The Basic credential sent to a token endpoint: none when there is no login or the realm is not allowed one. */
  async #basicFor(registry: string, endpoint: TokenEndpoint): Promise<{ auth: string; account: string } | undefined> {
    const auth = await this.#options.credentials.get(registry);
    if (!auth || !(this.#options.realmAllowed?.(endpoint.realm) ?? true)) return undefined;
    return { auth, account: decodeAccount(auth) };
  }

  async #authorize(headers: Headers, scheme: AuthScheme, registry: string, request: RepeatableRequest): Promise<void> {
    if (scheme.kind === "basic") {
      const auth = await this.#options.credentials.get(registry);
      if (auth) headers.set("authorization", `Basic ${auth}`);
      return;
    }
    const basic = await this.#basicFor(registry, scheme.endpoint);
    const token = await this.tokens.get(scheme.endpoint, request.scopes, basic, request.signal);
    headers.set("authorization", `Bearer ${token}`);
  }
}

/** The user name in a stored `base64(user:password)`. */
function decodeAccount(auth: string): string {
  try {
    const binary = atob(auth);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    const text = new TextDecoder().decode(bytes);
    return text.slice(0, Math.max(0, text.indexOf(":")));
  } catch {
    return "";
  }
}
