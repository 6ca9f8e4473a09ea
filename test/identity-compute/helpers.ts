/**
 * Shared set-up for the identity + compute example tests: a user store with
 * two users (cheap scrypt parameters), the composed example app, and request
 * helpers that call the handlers directly.
 */
import type { LogEvent } from "../../src/http/log.js";
import { hashPassword, memoryUserStore, storeCredentialCheck } from "../../src/users/index.js";
import { createExampleApp, type ExampleAppOptions } from "../../examples/identity-compute/src/app.js";

export const ORIGIN = "http://cloud.test";
export const FAST_SCRYPT = { N: 2 ** 4, r: 1, p: 1 };
export const PASSWORDS = { demo: "demo-secret-1", admin: "admin-secret-2", other: "other-secret-3" } as const;

/** A user store with `demo`, `admin` (sysadmin) and `other`, and its credential check. */
export async function credentials() {
  const store = memoryUserStore();
  for (const [username, password] of Object.entries(PASSWORDS)) {
    await store.create({
      username,
      email: "",
      realname: username,
      comment: "",
      sysadmin: username === "admin",
      passwordHash: await hashPassword(password, FAST_SCRYPT),
    });
  }
  return storeCredentialCheck(store, { scrypt: FAST_SCRYPT });
}

/** The composed example with a log that records every event. */
export async function exampleApp(options: Partial<ExampleAppOptions> = {}) {
  const logs: LogEvent[] = [];
  const app = createExampleApp({
    origin: ORIGIN,
    checkCredentials: await credentials(),
    log: (e) => logs.push(e),
    ...options,
  });
  return { ...app, logs };
}

type Scope = { project: { name: string; domain: { name?: string; id?: string } } | { id: string } } | undefined;

/** The password-method body of `POST /v3/auth/tokens`. */
export function passwordBody(user: string, password: string, scope?: Scope, domain: Record<string, string> = { name: "Default" }) {
  const auth: Record<string, unknown> = {
    identity: { methods: ["password"], password: { user: { name: user, password, domain } } },
  };
  if (scope) auth.scope = scope;
  return { auth };
}

export const DEMO_SCOPE: Scope = { project: { name: "demo", domain: { name: "Default" } } };

/** `POST /v3/auth/tokens` with a JSON body (or raw text). */
export function tokenRequest(body: unknown, init: { raw?: string; headers?: Record<string, string>; query?: string } = {}) {
  return new Request(`${ORIGIN}/v3/auth/tokens${init.query ?? ""}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: init.raw ?? JSON.stringify(body),
  });
}

/** Issue a token through the handler; returns the token and the parsed body. */
export async function issue(handler: (r: Request) => Promise<Response>, user: keyof typeof PASSWORDS, scoped = true) {
  const res = await handler(tokenRequest(passwordBody(user, PASSWORDS[user], scoped ? DEMO_SCOPE : undefined)));
  if (res.status !== 201) throw new Error(`token request failed: ${res.status} ${await res.text()}`);
  const token = res.headers.get("x-subject-token");
  if (!token) throw new Error("no X-Subject-Token");
  return { token, body: (await res.json()) as { token: Record<string, any> } };
}

/** A GET with optional headers. */
export function get(path: string, headers: Record<string, string> = {}, method = "GET") {
  return new Request(`${ORIGIN}${path}`, { method, headers });
}
