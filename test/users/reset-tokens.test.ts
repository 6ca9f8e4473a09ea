/**
 * What a password reset ends (issue 41, item 18), in code and in the guides:
 * the user's refresh tokens (bound to `cred_ver`) are refused at once, while a
 * registry access token issued before keeps working until it expires (the
 * registry does not re-check the binding). docs/token-auth.md says so;
 * docs/policies.md once claimed that a reset ends every token.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createTokenAuthorizer, createTokenService, defaultPolicy, generatedKeys } from "../../src/auth/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { createAccount, memoryUserStore, resetPassword, storeCredentialCheck } from "../../src/users/index.js";
import { FAST } from "./helpers.js";

const ORIGIN = "http://registry.test";
const SERVICE = "registry.test";
const ISSUER = "reset-test";

/** The sentence(s) of a guide that speak of a password reset, whitespace folded. */
function resetClaim(file: string): string {
  const text = readFileSync(new URL(`../../docs/${file}`, import.meta.url), "utf8").replace(/\s+/g, " ");
  return text.split(/(?<=\.) /).filter((s) => /password reset/i.test(s)).join(" ");
}

describe("a password reset", () => {
  it("refuses the user's refresh tokens but not a registry access token issued before, which lives until it expires", async () => {
    const store = memoryUserStore();
    await createAccount(store, { username: "alice", password: "Alice1234" }, { scrypt: FAST });
    const keys = generatedKeys({ alg: "ES256" });
    const tokens = createTokenService({ issuer: ISSUER, service: SERVICE, keys, checkCredentials: storeCredentialCheck(store, { scrypt: FAST }), policy: defaultPolicy() });
    const registry = createRegistry({ storage: memoryStorage(), authorize: createTokenAuthorizer({ realm: `${ORIGIN}/token`, service: SERVICE, issuer: ISSUER, keys }) });

    const basic = `Basic ${Buffer.from("alice:Alice1234").toString("base64")}`;
    const issued = await tokens(new Request(`${ORIGIN}/token?service=${SERVICE}&scope=repository:alice/app:pull&offline_token=true`, { headers: { authorization: basic } }));
    expect(issued.status).toBe(200);
    const { token, refresh_token } = (await issued.json()) as { token: string; refresh_token: string };
    expect(refresh_token).toBeTruthy();

    await resetPassword(store, "alice", "Recovered1", { scrypt: FAST });

    const refreshed = await tokens(new Request(`${ORIGIN}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token, service: SERVICE, client_id: "test", scope: "repository:alice/app:pull" }),
    }));
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");

    // Still authorized: 404 for the empty repository, not 401.
    const listed = await registry(new Request(`${ORIGIN}/v2/alice/app/tags/list`, { headers: { authorization: `Bearer ${token}` } }));
    expect(listed.status).toBe(404);
  });

  it("the guides say the same: policies.md agrees with token-auth.md that registry access tokens outlive a reset", () => {
    const policies = resetClaim("policies.md");
    expect(policies).not.toMatch(/ends every token/i);
    expect(policies).toMatch(/refresh tokens/);
    expect(policies).toMatch(/registry access tokens[^.]*stay valid until they expire/);
    expect(readFileSync(new URL("../../docs/token-auth.md", import.meta.url), "utf8").replace(/\s+/g, " "))
      .toMatch(/The registry ignores both claims: its access tokens live `expiresIn` seconds/);
  });
});
