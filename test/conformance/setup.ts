/**
 * Shared set-up of the conformance tests (the OCI distribution-spec conformance
 * workflows, written as this project's own unit tests): a registry in each of
 * the modes the suite is run against, token auth on or off × deletes on or off,
 * and a client that, like the suite's, answers a Bearer challenge with a token
 * from the realm and sends the request again. Everything runs in-process: the
 * registry and the token service are called as fetch handlers.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTokenAuthorizer, createTokenService, generatedKeys, memoryCredentials } from "../../src/auth/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

/** How the registry under test is configured. */
export interface Mode {
  auth: boolean;
  deletes: boolean;
}

/** The four modes each workflow runs in (`describe.each(MODES)("… auth $auth, deletes $deletes")`). */
export const MODES: Mode[] = [
  { auth: false, deletes: true },
  { auth: false, deletes: false },
  { auth: true, deletes: true },
  { auth: true, deletes: false },
];

export const ORIGIN = "http://registry.test";
const REALM = "http://auth.test/token";
const SERVICE = "registry.test";
const ISSUER = "auth.test";
const USER = "conformance";
const PASSWORD = "Conformance-pass-1";

/** What a test sends: headers and a body that can be sent twice (a retry after a challenge). */
export interface Send {
  headers?: Record<string, string>;
  body?: Uint8Array<ArrayBuffer> | string;
}

/** A registry under test and its client. */
export interface Target {
  mode: Mode;
  /** The request as the suite's client makes it: with auth on, a 401 challenge is answered with a token and the request sent again. */
  send(method: string, pathOrUrl: string, init?: Send): Promise<Response>;
  /** The request without any credentials. */
  anonymous(method: string, pathOrUrl: string, init?: Send): Promise<Response>;
}

// One key for every target of a test file: ES256 keys are made in microseconds, RSA ones are not.
const keys = generatedKeys({ alg: "ES256" });
const users = memoryCredentials({ [USER]: { password: PASSWORD, admin: true } });
const tokenService = createTokenService({ issuer: ISSUER, service: SERVICE, keys, checkCredentials: users });

/** A fresh registry on memory storage in `mode`. */
export function target(mode: Mode): Target {
  const authorize = mode.auth ? createTokenAuthorizer({ realm: REALM, service: SERVICE, issuer: ISSUER, keys }) : undefined;
  const registry = createRegistry({ storage: memoryStorage(), uploadSecret: "conformance-secret", deleteEnabled: mode.deletes, ...(authorize ? { authorize } : {}) });
  const request = (method: string, pathOrUrl: string, init: Send, authorization?: string) => {
    const headers = new Headers(init.headers);
    if (authorization) headers.set("authorization", authorization);
    return registry(new Request(new URL(pathOrUrl, ORIGIN), { method, headers, body: init.body ?? null }));
  };
  return {
    mode,
    anonymous: (method, pathOrUrl, init = {}) => request(method, pathOrUrl, init),
    async send(method, pathOrUrl, init = {}) {
      const first = await request(method, pathOrUrl, init);
      const challenge = first.headers.get("www-authenticate");
      if (first.status !== 401 || challenge === null) return first;
      await first.body?.cancel();
      return request(method, pathOrUrl, init, `Bearer ${await token(challenge)}`);
    },
  };
}

/** A token for the scope a `Bearer realm=…,service=…,scope=…` challenge names. */
async function token(challenge: string): Promise<string> {
  const params = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
  const url = new URL(params.realm!);
  url.searchParams.set("service", params.service!);
  if (params.scope) url.searchParams.set("scope", params.scope);
  const response = await tokenService(new Request(url, { headers: { authorization: `Basic ${btoa(`${USER}:${PASSWORD}`)}` } }));
  expect(response.status).toBe(200);
  return ((await response.json()) as { token: string }).token;
}

/** Bytes, their digest and size. */
export interface Content {
  bytes: Uint8Array<ArrayBuffer>;
  digest: string;
  size: number;
}

export function digestOf(bytes: Uint8Array | string, algorithm: "sha256" | "sha512" = "sha256"): string {
  return `${algorithm}:${createHash(algorithm).update(bytes).digest("hex")}`;
}

export function content(data: Uint8Array<ArrayBuffer> | string, algorithm: "sha256" | "sha512" = "sha256"): Content {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return { bytes, digest: digestOf(bytes, algorithm), size: bytes.byteLength };
}

export function randomContent(size: number, algorithm: "sha256" | "sha512" = "sha256"): Content {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(size, i + 65536)));
  return content(bytes, algorithm);
}

/**
 * Expect a body to be exactly `c`'s bytes. Compared by length and digest:
 * vitest's deep equality walks a multi-MiB array for tens of seconds.
 */
export async function expectBody(response: Response, c: Content): Promise<void> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  expect(bytes.byteLength).toBe(c.size);
  expect(digestOf(bytes, c.digest.startsWith("sha512:") ? "sha512" : "sha256")).toBe(c.digest);
}

export const MEDIA = {
  manifest: "application/vnd.oci.image.manifest.v1+json",
  index: "application/vnd.oci.image.index.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
  empty: "application/vnd.oci.empty.v1+json",
} as const;

/** An OCI descriptor of `c`. */
export function descriptor(mediaType: string, c: Content, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { mediaType, digest: c.digest, size: c.size, ...extra };
}

/** A config blob unique to `seed` (the suite gives each workflow its own). */
export function configBlob(seed: string): Content {
  return content(JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] }, author: seed }, null, "\t"));
}

/** An image manifest document, serialised with tabs as the suite's are. */
export function imageManifest(config: Content, layers: Content[], extra: Record<string, unknown> = {}, configType: string = MEDIA.config): Content {
  return content(
    JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.manifest, config: descriptor(configType, config), layers: layers.map((l) => descriptor(MEDIA.layer, l)), ...extra }, null, "\t"),
  );
}

/** Monolithic push (POST, then PUT with the body), asserting the 202 and the 201. */
export async function pushBlob(t: Target, repo: string, c: Content): Promise<void> {
  const post = await t.send("POST", `/v2/${repo}/blobs/uploads/`);
  expect(post.status).toBe(202);
  const put = await t.send("PUT", withDigest(post.headers.get("location")!, c.digest), { body: c.bytes, headers: { "content-type": "application/octet-stream" } });
  expect(put.status, await put.clone().text()).toBe(201);
}

/** PUT a manifest under `reference`, asserting the 201. */
export async function pushManifest(t: Target, repo: string, reference: string, m: Content, mediaType: string = MEDIA.manifest): Promise<Response> {
  const put = await t.send("PUT", `/v2/${repo}/manifests/${reference}`, { body: m.bytes, headers: { "content-type": mediaType } });
  expect(put.status, await put.clone().text()).toBe(201);
  return put;
}

/** An upload `Location` with `digest=` added (it already has a query). */
export function withDigest(location: string, digest: string): string {
  const url = new URL(location, ORIGIN);
  url.searchParams.set("digest", digest);
  return url.href;
}

/** The `code`s of an OCI error body, checking its shape on the way. */
export async function errorCodes(response: Response): Promise<string[]> {
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await response.json()) as { errors: { code: string; message: string; detail: unknown }[] };
  expect(Array.isArray(body.errors)).toBe(true);
  for (const e of body.errors) {
    expect(typeof e.code).toBe("string");
    expect(typeof e.message).toBe("string");
    expect(e).toHaveProperty("detail");
  }
  return body.errors.map((e) => e.code);
}

/** The error codes the distribution-spec defines (an error body must use one of them). */
export const SPEC_ERROR_CODES = [
  "BLOB_UNKNOWN",
  "BLOB_UPLOAD_INVALID",
  "BLOB_UPLOAD_UNKNOWN",
  "DIGEST_INVALID",
  "MANIFEST_BLOB_UNKNOWN",
  "MANIFEST_INVALID",
  "MANIFEST_UNKNOWN",
  "NAME_INVALID",
  "NAME_UNKNOWN",
  "SIZE_INVALID",
  "UNAUTHORIZED",
  "DENIED",
  "UNSUPPORTED",
  "TOOMANYREQUESTS",
];

/**
 * What a DELETE gets in `mode`: 202 when deletes are on; 405 UNSUPPORTED with
 * an `Allow` that leaves DELETE out when they are off.
 */
export async function expectDelete(t: Target, path: string): Promise<void> {
  const response = await t.send("DELETE", path);
  if (t.mode.deletes) {
    expect(response.status, `DELETE ${path}`).toBe(202);
    return;
  }
  expect(response.status, `DELETE ${path}`).toBe(405);
  expect(response.headers.get("allow")).not.toMatch(/DELETE/);
  expect(await errorCodes(response)).toEqual(["UNSUPPORTED"]);
}

/**
 * `it` when `condition` holds, else nothing at all: a case that does not apply
 * to a mode is not declared (rather than reported as skipped).
 */
export function itIf(condition: boolean): typeof it {
  return condition ? it : ((() => {}) as unknown as typeof it);
}

/** `describe` when `condition` holds, else nothing (see {@link itIf}). */
export function describeIf(condition: boolean): typeof describe {
  return condition ? describe : ((() => {}) as unknown as typeof describe);
}
