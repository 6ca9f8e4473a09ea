/**
 * Property-based tests of the registry handler, called directly: random
 * methods, paths, names, tags, digests, headers, query parameters and bodies.
 * Properties: never a 5xx, never a rejection, never a hang; every error is the
 * OCI body with a known code whose status matches; what is stored verifies.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenAuthorizer, generatedKeys, signJwt } from "../../src/auth/index.js";
import type { LogEvent } from "../../src/http/log.js";
import { createRegistry } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { imageManifest, pushBlob, pushImage, sha256 } from "../registry/helpers.js";
import {
  PROPERTY_TIMEOUT,
  bodyArb,
  checkRegistryResponse,
  counter,
  digestArb,
  headerValue,
  methodArb,
  mutate,
  mutation,
  nameArb,
  nastySegment,
  params,
  queryValue,
  send,
  tagArb,
  tryRequest,
  validName,
  verifyAllBlobs,
} from "./support.js";

const BASE = "http://reg.test";

let storage: StorageDriver;
let registry: (r: Request) => Promise<Response>;
const errors: LogEvent[] = [];
let seeded: { digest: string; config: string; layer: string };

beforeAll(async () => {
  storage = memoryStorage();
  registry = createRegistry({
    storage,
    uploadSecret: "fuzz-secret",
    deleteEnabled: true,
    limits: { manifestBytes: 64 * 1024, listEntries: 50 },
    log: (e) => void (e.level === "error" && errors.push(e)),
  });
  seeded = await pushImage(registry, "lib/app", "v1", "seed");
  await pushImage(registry, "lib/other", "latest", "other");
});

afterAll(() => {
  console.log(`registry fuzz: ${counter.requests} requests`);
});

const suffixArb = fc.oneof(
  tagArb.map((t) => `manifests/${t}`),
  digestArb.map((d) => `manifests/${d}`),
  digestArb.map((d) => `blobs/${d}`),
  fc.constant("blobs/uploads/"),
  fc.constant("blobs/uploads"),
  fc.oneof(fc.uuid(), nastySegment).map((u) => `blobs/uploads/${u}`),
  fc.constant("tags/list"),
  digestArb.map((d) => `referrers/${d}`),
  nastySegment,
  fc.constant(""),
);

const pathArb = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(nameArb, suffixArb).map(([n, s]) => `/v2/${n}/${s}`) },
  { weight: 1, arbitrary: fc.constantFrom("/v2", "/v2/", "/v2/_catalog", "//v2//", "/v2//_catalog", "/v2/_catalog/", "/", "/v3/", "/v2/../v2/", "/v2/%2e%2e/%2e%2e/etc/passwd") },
  { weight: 1, arbitrary: fc.array(nastySegment, { maxLength: 6 }).map((p) => `/${p.join("/")}`) },
  { weight: 1, arbitrary: fc.nat({ max: 20_000 }).map((n) => `/v2/${"a/".repeat(n)}tags/list`) },
);

const queryArb = fc
  .array(
    fc.oneof(
      fc.tuple(fc.constant("n"), queryValue),
      fc.tuple(fc.constant("last"), fc.oneof(queryValue, tagArb, nameArb)),
      fc.tuple(fc.constant("digest"), digestArb),
      fc.tuple(fc.constant("mount"), digestArb),
      fc.tuple(fc.constant("from"), nameArb),
      fc.tuple(fc.constant("_state"), fc.oneof(queryValue, fc.base64String({ maxLength: 200 }).map((s) => `${s}.${s}`))),
      fc.tuple(fc.string({ maxLength: 8 }), queryValue),
    ),
    { maxLength: 5 },
  )
  .chain((pairs) =>
    fc.boolean().map((raw) => {
      if (pairs.length === 0) return "";
      // raw: no encoding at all (the URL parser decides); else URLSearchParams encoding
      if (raw) return "?" + pairs.map(([k, v]) => `${k}=${v}`).join("&");
      return "?" + new URLSearchParams(pairs).toString();
    }),
  );

const headersArb = fc.array(
  fc.tuple(fc.constantFrom("content-range", "range", "content-type", "content-length", "authorization", "accept", "x-filler", "host", "transfer-encoding"), headerValue),
  { maxLength: 5 },
);

describe("registry fuzz", () => {
  it(
    "random requests: never 5xx, never throws or hangs, errors are OCI bodies whose status matches the code",
    async () => {
      await fc.assert(
        fc.asyncProperty(methodArb, pathArb, queryArb, headersArb, bodyArb, async (method, path, query, headers, body) => {
          const request = tryRequest(BASE + path + query, method, headers, body);
          if (!request) return;
          const response = await send(registry, request);
          await checkRegistryResponse(response, request.method);
        }),
        params(),
      );
      expect(errors).toEqual([]);
    },
    PROPERTY_TIMEOUT,
  );

  it(
    "upload sessions with mutated _state, random Content-Range/Length and digests never break; every stored blob verifies",
    async () => {
      const step = fc.record({
        method: fc.constantFrom("PATCH", "PUT", "GET", "DELETE", "PATCH", "PUT"),
        state: fc.option(mutation, { nil: undefined }),
        range: fc.option(fc.oneof(headerValue, fc.tuple(fc.nat(300), fc.nat(300)).map(([a, b]) => `${a}-${b}`)), { nil: undefined }),
        length: fc.option(fc.oneof(fc.nat(400).map(String), headerValue), { nil: undefined }),
        body: fc.option(fc.uint8Array({ maxLength: 200 }), { nil: undefined }),
        digest: fc.oneof(fc.constant("right"), fc.constant("none"), digestArb),
        name: fc.option(validName, { nil: undefined, freq: 8 }),
      });
      await fc.assert(
        fc.asyncProperty(validName, fc.array(step, { minLength: 1, maxLength: 6 }), async (name, steps) => {
          const start = await send(registry, new Request(`${BASE}/v2/${name}/blobs/uploads/`, { method: "POST" }));
          await checkRegistryResponse(start, "POST");
          expect(start.status).toBe(202);
          let location = new URL(start.headers.get("location")!);
          const sent: Uint8Array[] = [];
          for (const s of steps) {
            const url = new URL(location);
            if (s.name) url.pathname = url.pathname.replace(`/v2/${name}/`, `/v2/${s.name}/`);
            if (s.state) url.searchParams.set("_state", mutate(url.searchParams.get("_state") ?? "", s.state));
            if (s.method === "PUT" && s.digest !== "none") {
              const all = Buffer.concat([...sent, ...(s.body ? [s.body] : [])]);
              url.searchParams.set("digest", s.digest === "right" ? sha256(all) : s.digest);
            }
            const headers: [string, string][] = [];
            if (s.range !== undefined) headers.push(["content-range", s.range]);
            if (s.length !== undefined) headers.push(["content-length", s.length]);
            const body = s.method === "GET" || s.method === "DELETE" ? undefined : s.body && new Uint8Array(s.body);
            const request = tryRequest(url.href, s.method, headers, body);
            if (!request) continue;
            const response = await send(registry, request);
            await checkRegistryResponse(response, s.method);
            if (response.status === 202 && s.body) sent.push(s.body);
            const next = response.headers.get("location");
            if (next && response.status !== 201) location = new URL(next);
          }
          await verifyAllBlobs(storage);
        }),
        params(),
      );
      expect(errors).toEqual([]);
    },
    PROPERTY_TIMEOUT,
  );

  it(
    "random manifests: 4xx or stored byte for byte under the served digest",
    async () => {
      const desc = fc.record(
        {
          mediaType: fc.oneof(fc.constantFrom("application/vnd.oci.image.layer.v1.tar+gzip", "application/vnd.oci.image.config.v1+json", "application/vnd.oci.image.manifest.v1+json"), fc.string({ maxLength: 10 }), fc.anything()),
          digest: fc.oneof(fc.constantFrom(seeded.config, seeded.layer, seeded.digest), digestArb, fc.anything()),
          size: fc.oneof(fc.integer(), fc.double(), fc.constant(Number.MAX_SAFE_INTEGER + 2), fc.anything()),
          urls: fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 }),
          annotations: fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.string({ maxLength: 5 }), fc.anything())),
          artifactType: fc.string({ maxLength: 10 }),
        },
        { requiredKeys: [] },
      );
      const doc = fc.record(
        {
          schemaVersion: fc.oneof(fc.constant(2), fc.constant(1), fc.anything()),
          mediaType: fc.oneof(
            fc.constantFrom(
              "application/vnd.oci.image.manifest.v1+json",
              "application/vnd.oci.image.index.v1+json",
              "application/vnd.docker.distribution.manifest.v2+json",
              "application/vnd.docker.distribution.manifest.list.v2+json",
              "application/vnd.container.distribution.manifest.v2+json",
            ),
            fc.string({ maxLength: 12 }),
          ),
          config: fc.oneof(desc, fc.anything()),
          layers: fc.oneof(fc.array(desc, { maxLength: 3 }), fc.anything()),
          manifests: fc.oneof(fc.array(desc, { maxLength: 3 }), fc.anything()),
          subject: fc.oneof(desc, fc.anything()),
          artifactType: fc.oneof(fc.string({ maxLength: 10 }), fc.anything()),
          annotations: fc.anything(),
        },
        { requiredKeys: [] },
      );
      const contentType = fc.option(
        fc.oneof(
          fc.constantFrom("application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json", "application/json", "application/vnd.docker.distribution.manifest.v1+prettyjws"),
          headerValue,
        ),
        { nil: undefined },
      );
      const raw = fc.oneof({ weight: 4, arbitrary: doc.map((d) => JSON.stringify(d)) }, { weight: 1, arbitrary: bodyArb.map((b) => b ?? "") });
      await fc.assert(
        fc.asyncProperty(raw, contentType, fc.oneof(tagArb, fc.constant("by-digest")), fc.constantFrom("lib/app", "lib/fresh", "x"), async (body, type, ref, name) => {
          const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
          const reference = ref === "by-digest" ? sha256(bytes) : ref;
          const request = tryRequest(`${BASE}/v2/${name}/manifests/${reference}`, "PUT", type === undefined ? [] : [["content-type", type]], new Uint8Array(bytes));
          if (!request) return;
          const put = await send(registry, request);
          await checkRegistryResponse(put, "PUT");
          if (put.status !== 201) return;
          const digest = put.headers.get("docker-content-digest")!;
          expect(digest).toBe(sha256(bytes));
          const get = await send(registry, new Request(`${BASE}/v2/${name}/manifests/${digest}`));
          expect(get.status).toBe(200);
          expect(Buffer.from(await get.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
        }),
        params(),
      );
      expect(errors).toEqual([]);
    },
    PROPERTY_TIMEOUT,
  );

  it(
    "behind the token authorizer: anything but the real token (or a byte-identical re-encoding) gets 401 with a challenge",
    async () => {
      const keys = generatedKeys({ alg: "ES256" });
      const store = memoryStorage();
      const open = createRegistry({ storage: store, uploadSecret: "s" });
      await pushImage(open, "lib/app", "v1", "auth");
      const authorize = createTokenAuthorizer({ realm: "http://auth.test/token", service: "reg.test", issuer: "fuzz", keys });
      const guarded = createRegistry({ storage: store, uploadSecret: "s", authorize });
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: "fuzz", sub: "alice", aud: "reg.test", exp: now + 600, nbf: now - 10, iat: now, jti: "j", access: [{ type: "repository", name: "lib/app", actions: ["pull"] }] };
      const real = await signJwt(claims, await keys.signingKey());
      const [h, p, s] = real.split(".") as [string, string, string];
      const canonical = (t: string) => {
        try {
          return t
            .split(".")
            .map((part) => Buffer.from(part, "base64url").toString("hex"))
            .join(".");
        } catch {
          return t;
        }
      };
      const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      const jsonish = fc.oneof(fc.json({ maxDepth: 2 }).map((j) => Buffer.from(j).toString("base64url")), fc.base64String({ maxLength: 60 }).map((x) => x.replace(/=/g, "")));
      const tokenArb = fc.oneof(
        fc.constant(real),
        fc.tuple(mutation, fc.nat(2)).map(([m, part]) => [h, p, s].map((x, i) => (i === part ? mutate(x, m) : x)).join(".")),
        fc.record({ exp: fc.integer(), nbf: fc.integer(), aud: fc.anything(), iss: fc.anything(), access: fc.anything(), sub: fc.anything() }, { requiredKeys: [] }).map((over) => `${h}.${b64({ ...claims, ...over })}.${s}`),
        fc.record({ alg: fc.oneof(fc.constantFrom("none", "HS256", "RS256", "ES384", "EdDSA"), fc.anything()), kid: fc.anything(), x5c: fc.anything(), jwk: fc.anything() }, { requiredKeys: [] }).map((hd) => `${b64(hd)}.${p}.${s}`),
        fc.tuple(jsonish, jsonish, jsonish).map((parts) => parts.join(".")),
        fc.string({ maxLength: 100 }),
        fc.nat({ max: 70_000 }).map((n) => `${h}.${"A".repeat(n)}.${s}`),
      );
      const authArb = fc.oneof(
        tokenArb.map((t) => `Bearer ${t}`),
        tokenArb.map((t) => `bearer  ${t} `),
        fc.string({ maxLength: 60 }).map((x) => `Basic ${Buffer.from(x).toString("base64")}`),
        fc.string({ maxLength: 60 }).map((x) => `Basic ${x}`),
        headerValue,
      );
      const routeArb = fc.constantFrom("/v2/", "/v2/lib/app/manifests/v1", "/v2/lib/app/tags/list", "/v2/_catalog", `/v2/lib/app/blobs/${sha256("x")}`, "/v2/lib/app/blobs/uploads/", "/v2/lib/other/manifests/v1");
      await fc.assert(
        fc.asyncProperty(authArb, routeArb, fc.constantFrom("GET", "HEAD", "POST"), async (authorization, route, method) => {
          const request = tryRequest(BASE + route, method, [["authorization", authorization]], undefined);
          if (!request) return;
          const response = await send(guarded, request);
          await checkRegistryResponse(response, method);
          if (response.status === 401) {
            expect(response.headers.get("www-authenticate")).toMatch(/^Bearer realm="http:\/\/auth\.test\/token",service="reg\.test"/);
            return;
          }
          // Method checks come before authorization and reveal nothing.
          if (response.status === 405) return;
          // Past authorization: only the real token may get here, and only for what it grants (pull lib/app, or GET /v2/).
          const token = /^bearer +(.*)$/i.exec(authorization.trim())?.[1]?.trim();
          expect(token && canonical(token)).toBe(canonical(real));
          expect(route === "/v2/" || (route.startsWith("/v2/lib/app/") && method !== "POST")).toBe(true);
        }),
        params(),
      );
    },
    PROPERTY_TIMEOUT,
  );
});

describe("fuzz helpers", () => {
  it("verifyAllBlobs catches a corrupted blob", async () => {
    const s = memoryStorage();
    const r = createRegistry({ storage: s, uploadSecret: "x" });
    const digest = await pushBlob(r, "a", "hello");
    expect(await verifyAllBlobs(s)).toBe(1);
    await s.write(`blobs/sha256/${digest.slice(7, 9)}/${digest.slice(7)}/data`, new TextEncoder().encode("evil"));
    await expect(verifyAllBlobs(s)).rejects.toThrow(/holds bytes/);
    void imageManifest;
  });
});
