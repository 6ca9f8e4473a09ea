/**
 * Property-based tests of the token service (the realm): random methods,
 * query strings, forms, scopes, services, credentials and refresh tokens.
 * Properties: never a 5xx, never a rejection or hang; errors are JSON
 * `{error, details}` with the status of the error; and whatever is issued
 * never grants more than the policy allows the authenticated caller.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenService, generatedKeys, memoryCredentials } from "../../src/auth/index.js";
import type { LogEvent } from "../../src/http/log.js";
import {
  PROPERTY_TIMEOUT,
  checkTokenResponse,
  counter,
  headerValue,
  methodArb,
  mutate,
  mutation,
  nameArb,
  params,
  queryValue,
  send,
  tryRequest,
} from "./support.js";

const URL_BASE = "http://auth.test/token";
const PASSWORD = "Alice-pass-1";
let service: (r: Request) => Promise<Response>;
const logs: LogEvent[] = [];
let refresh = "";
let access = "";

beforeAll(async () => {
  service = createTokenService({
    issuer: "fuzz-issuer",
    service: ["reg.test", "other.test"],
    keys: generatedKeys({ alg: "ES256" }),
    checkCredentials: memoryCredentials({ alice: { password: PASSWORD }, root: { password: "Root-pass-1", admin: true } }),
    publicRepositories: ["public/*"],
    log: (e) => void logs.push(e),
  });
  const form = new URLSearchParams({ grant_type: "password", username: "alice", password: PASSWORD, access_type: "offline", service: "reg.test", scope: "repository:alice/app:pull,push" });
  const r = await service(new Request(URL_BASE, { method: "POST", body: form }));
  const body = (await r.json()) as { refresh_token: string; token: string };
  refresh = body.refresh_token;
  access = body.token;
  expect(refresh).toBeTruthy();
});

afterAll(() => {
  console.log(`token service fuzz: ${counter.requests} requests`);
});

const actionArb = fc.oneof(fc.constantFrom("pull", "push", "delete", "*", "pull,push", "pull,push,delete", ""), fc.string({ maxLength: 8 }));
const scopeArb = fc.oneof(
  fc.tuple(fc.constantFrom("repository", "registry", "repository(plugin)", "x"), fc.oneof(nameArb, fc.constantFrom("public/a", "alice/app", "alice", "bob/app", "catalog", "alice/../bob/x", "public/*", "*")), actionArb).map(([t, n, a]) => `${t}:${n}:${a}`),
  fc.constantFrom("registry:catalog:*", "repository:alice/app:pull", "repository:public/x:pull,push", ":::", "repository::pull", "repository:a:b:c:pull"),
  fc.string({ maxLength: 30 }),
);
const scopesArb = fc.oneof(fc.array(scopeArb, { maxLength: 6 }), fc.nat({ max: 200 }).map((n) => Array.from({ length: n }, (_, i) => `repository:public/r${i}:pull`)));

const credentialArb = fc.oneof(
  fc.constantFrom(["alice", PASSWORD], ["root", "Root-pass-1"], ["alice", "wrong"], ["nobody", PASSWORD], ["", ""], ["alice", PASSWORD + "x"]),
  fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 })),
  fc.tuple(fc.constant("alice"), fc.nat({ max: 100_000 }).map((n) => "p".repeat(n))),
);
const authArb = fc.option(
  fc.oneof(
    credentialArb.map(([u, p]) => `Basic ${Buffer.from(`${u}:${p}`).toString("base64")}`),
    fc.string({ maxLength: 40 }).map((s) => `Basic ${s}`),
    fc.string({ maxLength: 40 }).map((s) => `Bearer ${s}`),
    headerValue,
  ),
  { nil: undefined },
);
const refreshArb = fc.oneof(
  fc.constant("REAL"),
  mutation.map((m) => ["MUTATED", m] as const),
  fc.constant("ACCESS"),
  fc.string({ maxLength: 60 }),
);

function refreshValue(v: string | readonly ["MUTATED", [string, number, string]]): string {
  if (v === "REAL") return refresh;
  if (v === "ACCESS") return access;
  if (typeof v === "string") return v;
  return mutate(refresh, v[1]);
}

/** What the default policy may grant `who` (undefined: anonymous). */
function allowed(who: string, type: string, name: string, action: string): boolean {
  if (who === "root") return true;
  if (type !== "repository") return false;
  if (name.startsWith("public/") && action === "pull") return true;
  return who !== "" && name.startsWith(`${who}/`) && ["pull", "push", "delete"].includes(action);
}

function checkGrant(body: unknown): void {
  const token = (body as { token: string }).token;
  const payload = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { sub: string; access: { type: string; name: string; actions: string[] }[] };
  for (const a of payload.access) {
    for (const action of a.actions) {
      if (!allowed(payload.sub, a.type, a.name, action)) throw new Error(`over-grant to ${JSON.stringify(payload.sub)}: ${a.type}:${a.name}:${action}`);
    }
  }
}

describe("token service fuzz", () => {
  it(
    "GET with random query and credentials: no 5xx, error shape, never an over-grant",
    async () => {
      const extra = fc.array(fc.tuple(fc.constantFrom("service", "account", "client_id", "offline_token", "scope", "x"), queryValue), { maxLength: 4 });
      await fc.assert(
        fc.asyncProperty(fc.constantFrom("GET", "HEAD", "GET", "PUT", "DELETE", "OPTIONS"), scopesArb, fc.option(fc.oneof(fc.constantFrom("reg.test", "other.test"), queryValue), { nil: undefined }), extra, authArb, async (method, scopes, svc, more, auth) => {
          const q = new URLSearchParams();
          if (svc !== undefined) q.set("service", svc);
          for (const s of scopes) q.append("scope", s);
          for (const [k, v] of more) q.append(k, v);
          const request = tryRequest(`${URL_BASE}?${q}`, method, auth === undefined ? [] : [["authorization", auth]], undefined);
          if (!request) return;
          const response = await send(service, request);
          const body = await checkTokenResponse(response, method);
          if (response.status === 200 && method !== "HEAD") checkGrant(body);
        }),
        params(),
      );
      expect(logs.filter((l) => l.level === "error")).toEqual([]);
    },
    PROPERTY_TIMEOUT,
  );

  it(
    "POST forms (password, refresh_token, garbage): no 5xx, error shape, never an over-grant",
    async () => {
      const form = fc.record(
        {
          grant_type: fc.oneof(fc.constantFrom("password", "refresh_token", "client_credentials", "authorization_code", ""), queryValue),
          credentials: credentialArb,
          refresh: refreshArb,
          access_type: fc.constantFrom("offline", "online", ""),
          service: fc.oneof(fc.constantFrom("reg.test", "other.test"), queryValue),
          scope: fc.array(scopeArb, { maxLength: 5 }).map((s) => s.join(" ")),
          client_id: queryValue,
        },
        { requiredKeys: ["grant_type"] },
      );
      const bodyArb = fc.oneof(
        { weight: 6, arbitrary: form.map((f) => {
          const p = new URLSearchParams({ grant_type: f.grant_type });
          if (f.credentials) {
            p.set("username", f.credentials[0]);
            p.set("password", f.credentials[1]);
          }
          if (f.refresh !== undefined) p.set("refresh_token", refreshValue(f.refresh));
          for (const k of ["access_type", "service", "scope", "client_id"] as const) if (f[k] !== undefined) p.set(k, f[k]!);
          return p.toString();
        }) },
        { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 200 }), fc.json(), fc.nat({ max: 100_000 }).map((n) => "a=".padEnd(n, "x"))) },
      );
      const typeArb = fc.option(fc.oneof(fc.constant("application/x-www-form-urlencoded"), headerValue), { nil: undefined });
      await fc.assert(
        fc.asyncProperty(methodArb, bodyArb, typeArb, authArb, async (method, body, type, auth) => {
          const headers: [string, string][] = [];
          if (type !== undefined) headers.push(["content-type", type]);
          if (auth !== undefined) headers.push(["authorization", auth]);
          const request = tryRequest(URL_BASE, method === "GET" || method === "HEAD" ? "POST" : method, headers, body);
          if (!request) return;
          const response = await send(service, request);
          const out = await checkTokenResponse(response, request.method);
          if (response.status === 200) checkGrant(out);
        }),
        params(),
      );
      expect(logs.filter((l) => l.level === "error")).toEqual([]);
    },
    PROPERTY_TIMEOUT,
  );
});
