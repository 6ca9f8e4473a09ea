/**
 * How the web page reads and changes the registry and the users: by calling
 * the services' own fetch handlers in process, with a short token minted for
 * the signed-in user and granted by the same access policy as the token
 * service's. The services then enforce exactly what they enforce for any
 * client, so the page can never show or do more than the user may.
 *
 * @module
 */
import type { Access, Principal } from "../auth/access.js";
import type { AccessPolicy } from "../auth/token-service/policy.js";
import { tryParseDigest } from "../oci/digest.js";
import { isValidName, isValidTag } from "../registry/names.js";
import { readAll } from "../util/streams.js";

/** The management API as the page calls it. */
export interface UiUsersApi {
  /** Its fetch handler. */
  handler: (request: Request) => Promise<Response>;
  /** The path of its `users` collection, e.g. `/api/users`. */
  path: string;
}

/** What the UI needs of its host (see `UiOptions`). */
export interface UiBackend {
  /** The registry's fetch handler. */
  registry: (request: Request) => Promise<Response>;
  /** The management API, for the administrators' Users page. */
  users?: UiUsersApi;
  /** Decides what a user may do, as the token service does. */
  policy: AccessPolicy;
  /**
   * A bearer token for an in-process call to the registry (`"registry"`) or
   * the management API (`"management"`), for `principal` (undefined: the page
   * itself, only ever for `registry:catalog:*`) with exactly `access`.
   * Undefined when the services do not check tokens.
   */
  token: (principal: Principal | undefined, audience: "registry" | "management", access: Access[]) => Promise<string | undefined>;
}

const ORIGIN = "http://registry-kit-ui.invalid";
const MANIFEST_TYPES = [
  "application/vnd.oci.image.index.v1+json", "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json", "application/vnd.docker.distribution.manifest.v2+json",
].join(", ");
/** Largest manifest, config or JSON answer the page reads. */
const JSON_LIMIT = 4 * 1024 * 1024;

/** A JSON answer of a service. */
export interface JsonAnswer<T> {
  status: number;
  headers: Headers;
  json: T | undefined;
  size: number;
}

async function call<T>(handler: (request: Request) => Promise<Response>, path: string, init: RequestInit & { token?: string | undefined }): Promise<JsonAnswer<T>> {
  const headers = new Headers(init.headers);
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  const response = await handler(new Request(ORIGIN + path, { ...init, headers }));
  let bytes: Uint8Array = new Uint8Array(0);
  if (response.body) bytes = await readAll(response.body, JSON_LIMIT, () => new RangeError("answer too large for the page"));
  let json: T | undefined;
  try {
    json = bytes.byteLength > 0 ? (JSON.parse(new TextDecoder().decode(bytes)) as T) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, json, size: bytes.byteLength };
}

/**
 * `name` if it is a valid repository name; a `TypeError` (answered 400)
 * otherwise, so that nothing the browser sends can bend the path of a call.
 */
function checkName(name: string): string {
  if (!isValidName(name)) throw new TypeError("invalid repository name");
  return name;
}

/** `reference` if it is a valid tag or digest (see {@link checkName}). */
function checkReference(reference: string): string {
  if (!isValidTag(reference) && tryParseDigest(reference) === undefined) throw new TypeError("invalid tag or digest");
  return reference;
}

/** Whether `principal` may pull `name`, by the policy. */
export async function mayPull(backend: UiBackend, principal: Principal, name: string): Promise<boolean> {
  const granted = await backend.policy(principal, [{ type: "repository", name, actions: ["pull"] }]);
  return granted.some((a) => a.type === "repository" && a.name === name && a.actions.includes("pull"));
}

/** Whether `principal` may delete in `name`, by the policy. */
export async function mayDelete(backend: UiBackend, principal: Principal, name: string): Promise<boolean> {
  const granted = await backend.policy(principal, [{ type: "repository", name, actions: ["delete"] }]);
  return granted.some((a) => a.type === "repository" && a.name === name && a.actions.includes("delete"));
}

/** Call the registry as `principal` with the access the policy grants of `wanted`. */
export async function registryCall<T>(backend: UiBackend, principal: Principal | undefined, wanted: Access[], path: string, init: RequestInit = {}): Promise<JsonAnswer<T>> {
  const access = principal ? await backend.policy(principal, wanted) : wanted;
  return call<T>(backend.registry, path, { ...init, token: await backend.token(principal, "registry", access) });
}

/** One page of the catalog, read by the page itself (filtered by the caller before it is shown). */
export async function catalogPage(backend: UiBackend, after: string | undefined, n: number): Promise<{ names: string[]; more: boolean }> {
  const query = new URLSearchParams({ n: String(n) });
  if (after) query.set("last", after);
  const answer = await registryCall<{ repositories?: string[] }>(backend, undefined, [{ type: "registry", name: "catalog", actions: ["*"] }], `/v2/_catalog?${query}`);
  if (answer.status !== 200) throw new Error(`the registry's catalog answered ${answer.status}`);
  return { names: answer.json?.repositories ?? [], more: answer.headers.has("link") };
}

/** GET a manifest (any image type) of `name` as `principal`. */
export function getManifest(backend: UiBackend, principal: Principal, name: string, reference: string): Promise<JsonAnswer<Manifest>> {
  return registryCall<Manifest>(backend, principal, [{ type: "repository", name, actions: ["pull"] }], `/v2/${checkName(name)}/manifests/${checkReference(reference)}`, {
    headers: { accept: MANIFEST_TYPES },
  });
}

/** GET a small JSON blob (an image config) of `name` as `principal`. */
export function getJsonBlob<T>(backend: UiBackend, principal: Principal, name: string, digest: string): Promise<JsonAnswer<T>> {
  return registryCall<T>(backend, principal, [{ type: "repository", name, actions: ["pull"] }], `/v2/${checkName(name)}/blobs/${checkReference(digest)}`);
}

/** The referrers of `digest` in `name`, as `principal`. */
export function getReferrers(backend: UiBackend, principal: Principal, name: string, digest: string): Promise<JsonAnswer<Manifest>> {
  return registryCall<Manifest>(backend, principal, [{ type: "repository", name, actions: ["pull"] }], `/v2/${checkName(name)}/referrers/${checkReference(digest)}`);
}

/** DELETE a tag of `name` as `principal`. */
export function deleteTag(backend: UiBackend, principal: Principal, name: string, tag: string): Promise<JsonAnswer<unknown>> {
  return registryCall(backend, principal, [{ type: "repository", name, actions: ["delete"] }], `/v2/${checkName(name)}/manifests/${checkReference(tag)}`, { method: "DELETE" });
}

/** Call the management API as `principal` (an administrator). */
export async function usersCall<T>(backend: UiBackend, principal: Principal, method: string, subpath: string, body?: unknown): Promise<JsonAnswer<T>> {
  if (!backend.users) return { status: 404, headers: new Headers(), json: undefined, size: 0 };
  const token = await backend.token(principal, "management", []);
  return call<T>(backend.users.handler, `${backend.users.path}${subpath}`, {
    method,
    token,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } } : {}),
  });
}

/** The parts of an image manifest or index the page shows. */
export interface Manifest {
  mediaType?: string;
  artifactType?: string;
  config?: Descriptor;
  layers?: Descriptor[];
  manifests?: Descriptor[];
  annotations?: Record<string, string>;
  subject?: Descriptor;
}

/** An OCI descriptor. */
export interface Descriptor {
  mediaType?: string;
  digest?: string;
  size?: number;
  artifactType?: string;
  platform?: { os?: string; architecture?: string; variant?: string };
  annotations?: Record<string, string>;
}
