import { beforeAll, describe, expect, it } from "vitest";
import { b64url, fromB64url, toArrayBuffer, utf8 } from "../../src/util/bytes.js";
import {
  createTokenAuthorizer,
  signJwt,
  type Access,
  type Authorizer,
  type SigningKey,
} from "../../src/auth/index.js";
import { toPem } from "../../src/auth/keys/pem.js";
import { markInMemoryReader, takeInMemoryBody } from "../../src/http/in-memory-response.js";
import { headerPairs } from "../../src/http/header-pairs.js";
import type { LogEvent } from "../../src/http/log.js";
import { lightRequest } from "../../src/node/light-request.js";
import { CATALOG, ISSUER, REALM, SERVICE, claims, encode, importPkcs8, nowSec, pull, push, rawSign, signer, type Signer } from "./helpers.js";

const REPO = "interop/hello";
const PULL_BODY =
  '{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Class":"","Name":"interop/hello","Action":"pull"}]}]}';
const PUSH_BODY =
  '{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Class":"","Name":"interop/hello","Action":"pull"},{"Type":"repository","Class":"","Name":"interop/hello","Action":"push"}]}]}';
const challenge = (scope: string | undefined, error?: string) =>
  `Bearer realm="${REALM}",service="${SERVICE}"${scope ? `,scope="${scope}"` : ""}${error ? `,error="${error}"` : ""}`;

let trusted: Signer;
let other: Signer;
let ecTrusted: Signer;
let authorize: Authorizer;
let logs: LogEvent[];
let sk: SigningKey;

beforeAll(async () => {
  [trusted, other, ecTrusted] = await Promise.all([signer("trusted"), signer("other"), signer("ec", "ES256")]);
  logs = [];
  authorize = createTokenAuthorizer({
    realm: REALM,
    service: SERVICE,
    issuer: ISSUER,
    rootCertBundle: trusted.pem.certificate + ecTrusted.pem.certificate,
    log: (e) => logs.push(e),
  });
  sk = await trusted.keys.signingKey();
});

/** A kid-only RS256 token by the trusted key. */
const good = (overrides: Record<string, unknown> = {}) => signJwt(claims(overrides), sk, { x5c: false });

function req(token: string | undefined, method = "GET", scheme = "Bearer"): Request {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `${scheme} ${token}`;
  return new Request(`http://127.0.0.1:5055/v2/${REPO}/tags/list`, { method, headers });
}

async function expectChallenge(res: Response | undefined, wwwAuthenticate: string, body: string) {
  expect(res).toBeDefined();
  expect(res!.status).toBe(401);
  expect(res!.headers.get("www-authenticate")).toBe(wwwAuthenticate);
  expect(res!.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(res!.headers.get("docker-distribution-api-version")).toBe("registry/2.0");
  expect(res!.headers.get("container-distribution-api-version")).toBe("registry/2.0");
  expect(await res!.text()).toBe(body);
}

const invalid = (res: Response | undefined) => expectChallenge(res, challenge(`repository:${REPO}:pull`, "invalid_token"), PULL_BODY);

describe("construction", () => {
  it("requires realm, service, issuer and a bundle", () => {
    const base = { realm: REALM, service: SERVICE, issuer: ISSUER, rootCertBundle: "x" };
    for (const k of ["realm", "service", "issuer", "rootCertBundle"] as const) {
      const o: Record<string, unknown> = { ...base };
      delete o[k];
      expect(() => createTokenAuthorizer(o as never)).toThrow(k === "rootCertBundle" ? /rootCertBundle/ : new RegExp(k));
    }
  });
  it("refuses an HS256 secret that is a PEM", async () => {
    expect(() =>
      createTokenAuthorizer({ realm: REALM, service: SERVICE, issuer: ISSUER, hmacSecret: trusted.pem.certificate }),
    ).toThrow(/PEM/);
  });
});

describe("no usable credentials → challenge without error", () => {
  it("no Authorization header", async () => {
    await expectChallenge(await authorize(req(undefined), pull(REPO)), challenge(`repository:${REPO}:pull`), PULL_BODY);
  });
  it("Basic credentials", async () => {
    await expectChallenge(await authorize(req(btoa("a:b"), "GET", "Basic"), pull(REPO)), challenge(`repository:${REPO}:pull`), PULL_BODY);
  });
  it("Bearer with an empty token", async () => {
    await expectChallenge(await authorize(req(""), pull(REPO)), challenge(`repository:${REPO}:pull`), PULL_BODY);
  });
  it("/v2/ has no scope and detail null", async () => {
    await expectChallenge(
      await authorize(req(undefined), []),
      challenge(undefined),
      '{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}',
    );
  });
  it("HEAD gets the headers and Content-Length but no body", async () => {
    const res = (await authorize(req(undefined, "HEAD"), pull(REPO)))!;
    expect(res.status).toBe(401);
    // Distribution sends 156: its Go encoder adds a newline after the 155-byte JSON; ours is the GET body's length.
    expect(res.headers.get("content-length")).toBe(String(PULL_BODY.length));
    expect(res.headers.get("www-authenticate")).toBe(challenge(`repository:${REPO}:pull`));
    expect(res.body).toBeNull();
  });
  it("each refused repository gets its own body, also after hundreds of others, and a reader cannot change the next one", async () => {
    const body = (name: string) =>
      `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Class":"","Name":"${name}","Action":"pull"}]}]}`;
    const marked = () => {
      const r = req(undefined);
      markInMemoryReader(r); // as the Node adapter's requests are: the 401 keeps its body in memory
      return r;
    };
    for (let i = 0; i < 300; i++) {
      const res = (await authorize(i % 2 ? req(undefined) : marked(), pull(`many/r${i}`)))!;
      expect(await res.text()).toBe(body(`many/r${i}`));
    }
    const first = new Uint8Array(await (await authorize(marked(), pull(REPO)))!.arrayBuffer());
    first.fill(0x41);
    await expectChallenge(await authorize(marked(), pull(REPO)), challenge(`repository:${REPO}:pull`), PULL_BODY);
    const raw = takeInMemoryBody((await authorize(marked(), pull(REPO)))!);
    expect(new TextDecoder().decode(raw!.bytes)).toBe(PULL_BODY);
  });
  it("a route needing several actions or repositories gets one detail entry per action", async () => {
    await expectChallenge(await authorize(req(undefined, "PUT"), push(REPO)), challenge(`repository:${REPO}:pull,push`), PUSH_BODY);
    const res = await authorize(req(undefined, "POST"), [...push("interop/a"), ...pull("interop/b")]);
    const detail = (JSON.parse(await res!.text()) as { errors: [{ detail: { Name: string; Action: string }[] }] }).errors[0].detail;
    expect(detail.map((d) => `${d.Name}:${d.Action}`)).toEqual(["interop/a:pull", "interop/a:push", "interop/b:pull"]);
  });
  it("cross-repository mount: two scopes in one value", async () => {
    const needed: Access[] = [...push("interop/denied"), ...pull("interop/copy")];
    const res = await authorize(req(undefined, "POST"), needed);
    expect(res!.headers.get("www-authenticate")).toBe(challenge("repository:interop/denied:pull,push repository:interop/copy:pull"));
  });
});

describe("accepted tokens", () => {
  it("kid-only RS256 token", async () => {
    expect(await authorize(req(await good()), pull(REPO))).toBeUndefined();
  });
  it("x5c token", async () => {
    const t = await signJwt(claims(), sk);
    expect(JSON.parse(new TextDecoder().decode(fromB64url(t.split(".")[0]!))).x5c).toHaveLength(1);
    expect(await authorize(req(t), pull(REPO))).toBeUndefined();
  });
  it("thumbprint kid", async () => {
    const t = await signJwt(claims(), { ...sk, kid: trusted.vk.thumbprint });
    expect(await authorize(req(t), pull(REPO))).toBeUndefined();
  });
  it("ES256 token from a bundle EC key", async () => {
    const esk = await ecTrusted.keys.signingKey();
    expect(await authorize(req(await signJwt(claims(), esk, { x5c: false })), pull(REPO))).toBeUndefined();
  });
  it("any valid token on /v2/, even with empty access", async () => {
    expect(await authorize(req(await good({ access: [] })), [])).toBeUndefined();
  });
  it("aud as an array containing the service", async () => {
    expect(await authorize(req(await good({ aud: ["other", SERVICE] })), pull(REPO))).toBeUndefined();
  });
  it("exp 50 s in the past (inside the leeway)", async () => {
    expect(await authorize(req(await good({ exp: nowSec() - 50, nbf: nowSec() - 400 })), pull(REPO))).toBeUndefined();
  });
  it("nbf 50 s in the future (inside the leeway)", async () => {
    expect(await authorize(req(await good({ nbf: nowSec() + 50 })), pull(REPO))).toBeUndefined();
  });
  it("no nbf", async () => {
    const c = claims();
    delete c.nbf;
    expect(await authorize(req(await signJwt(c, sk, { x5c: false })), pull(REPO))).toBeUndefined();
  });
  it("* covers pull, push and delete", async () => {
    const t = await good({ access: [{ type: "repository", name: REPO, actions: ["*"] }] });
    expect(await authorize(req(t, "POST"), push(REPO))).toBeUndefined();
    expect(await authorize(req(t, "DELETE"), [{ type: "repository", name: REPO, actions: ["delete"] }])).toBeUndefined();
  });
  it("catalog with registry:catalog:*", async () => {
    const t = await good({ access: [{ type: "registry", name: "catalog", actions: ["*"] }] });
    expect(await authorize(req(t), CATALOG)).toBeUndefined();
  });
});

describe("rejected tokens → invalid_token, same answer every time", () => {
  it("alg none, with and without kid", async () => {
    await invalid(await authorize(req(encode({ typ: "JWT", alg: "none" }, claims()) ), pull(REPO)));
    await invalid(await authorize(req(encode({ typ: "JWT", alg: "none", kid: trusted.vk.kid }, claims())), pull(REPO)));
    // Even with a signature part present.
    await invalid(await authorize(req(encode({ alg: "none", kid: trusted.vk.kid }, claims(), new Uint8Array([1, 2, 3]))), pull(REPO)));
  });

  it("HS256 with the public key PEM (±newline) or the certificate PEM as secret", async () => {
    const spkiPem = toPem("PUBLIC KEY", trusted.vk.spki);
    for (const secret of [spkiPem, spkiPem.trimEnd(), trusted.pem.certificate]) {
      const key = await crypto.subtle.importKey("raw", toArrayBuffer(utf8(secret)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      const t = await rawSign({ typ: "JWT", alg: "HS256", kid: trusted.vk.kid }, claims(), key, "HMAC");
      await invalid(await authorize(req(t), pull(REPO)));
    }
  });

  it("PS256 (outside the default allow-list)", async () => {
    const pssKey = await importPkcs8(trusted.pem.privateKey, { name: "RSA-PSS", hash: "SHA-256" });
    const t = await rawSign({ typ: "JWT", alg: "PS256", kid: trusted.vk.kid }, claims(), pssKey, { name: "RSA-PSS", saltLength: 32 });
    await invalid(await authorize(req(t), pull(REPO)));
    // …accepted once configured.
    const withPss = createTokenAuthorizer({
      realm: REALM,
      service: SERVICE,
      issuer: ISSUER,
      rootCertBundle: trusted.pem.certificate,
      algorithms: ["RS256", "PS256"],
    });
    expect(await withPss(req(t), pull(REPO))).toBeUndefined();
  });

  it("unknown (well-formed) kid", async () => {
    const t = await signJwt(claims(), { ...sk, kid: "ABCD:EFGH:IJKL:MNOP:QRST:UVWX:YZ23:4567:ABCD:EFGH:IJKL:MNOP" }, { x5c: false });
    await invalid(await authorize(req(t), pull(REPO)));
    expect(logs.at(-1)).toMatchObject({ level: "info", reason: expect.stringContaining("untrusted key with ID") });
  });

  it("lower-case kid", async () => {
    const t = await signJwt(claims(), { ...sk, kid: trusted.vk.kid.toLowerCase() }, { x5c: false });
    await invalid(await authorize(req(t), pull(REPO)));
  });

  it("untrusted key with its own kid", async () => {
    const osk = await other.keys.signingKey();
    await invalid(await authorize(req(await signJwt(claims(), osk, { x5c: false })), pull(REPO)));
  });

  it("right kid, wrong signer", async () => {
    const osk = await other.keys.signingKey();
    await invalid(await authorize(req(await signJwt(claims(), { ...osk, kid: trusted.vk.kid }, { x5c: false })), pull(REPO)));
  });

  it("EC kid on an RS256 token (key type must match alg)", async () => {
    const t = await signJwt(claims(), { ...sk, kid: ecTrusted.vk.kid }, { x5c: false });
    await invalid(await authorize(req(t), pull(REPO)));
    expect(logs.at(-1)!.reason).toMatch(/cannot verify RS256/);
  });

  it("one flipped signature bit", async () => {
    const t = await good();
    const [h, p, s] = t.split(".") as [string, string, string];
    const sig = fromB64url(s);
    sig[10]! ^= 0x01;
    await invalid(await authorize(req(`${h}.${p}.${b64url(sig)}`), pull(REPO)));
  });

  it("wrong iss", async () => {
    await invalid(await authorize(req(await good({ iss: "someone-else" })), pull(REPO)));
    expect(logs.at(-1)!.reason).toBe('token from untrusted issuer: "someone-else"');
  });

  it("wrong aud (string and array)", async () => {
    await invalid(await authorize(req(await good({ aud: "other.service" })), pull(REPO)));
    await invalid(await authorize(req(await good({ aud: ["other.service"] })), pull(REPO)));
  });

  it("exp 70 s in the past (outside the leeway)", async () => {
    await invalid(await authorize(req(await good({ exp: nowSec() - 70, nbf: nowSec() - 400 })), pull(REPO)));
  });

  it("nbf 70 s in the future (outside the leeway)", async () => {
    await invalid(await authorize(req(await good({ nbf: nowSec() + 70 })), pull(REPO)));
  });

  it("missing exp", async () => {
    const c = claims();
    delete c.exp;
    await invalid(await authorize(req(await signJwt(c, sk, { x5c: false })), pull(REPO)));
  });

  it("exp before nbf", async () => {
    await invalid(await authorize(req(await good({ exp: nowSec() - 100, nbf: nowSec() + 100 })), pull(REPO)));
  });

  it("untrusted x5c (another self-signed certificate, signed with its key)", async () => {
    const osk = await other.keys.signingKey();
    await invalid(await authorize(req(await signJwt(claims(), osk)), pull(REPO)));
    // …even when it claims the trusted kid.
    await invalid(await authorize(req(await signJwt(claims(), { ...osk, kid: trusted.vk.kid })), pull(REPO)));
  });

  it("no kid, no x5c", async () => {
    await invalid(await authorize(req(await signJwt(claims(), sk, { x5c: false, kid: false })), pull(REPO)));
  });

  it("malformed tokens", async () => {
    for (const t of ["not-a-jwt", "a.b.c", "a.b", "....", encode({ typ: "JWT" }, claims(), new Uint8Array([1])), `${(await good()).slice(0, -3)}==`]) {
      await invalid(await authorize(req(t), pull(REPO)));
    }
    expect(logs.some((l) => l.reason === "malformed token")).toBe(true);
  });

  it("refresh token presented as an access token", async () => {
    await invalid(await authorize(req(await good({ token_use: "refresh" })), pull(REPO)));
  });
});

describe("valid tokens short of rights → insufficient_scope with the full needed scope", () => {
  it("token for another repository", async () => {
    const t = await good({ access: [{ type: "repository", name: "interop/other", actions: ["pull"] }] });
    await expectChallenge(await authorize(req(t), pull(REPO)), challenge(`repository:${REPO}:pull`, "insufficient_scope"), PULL_BODY);
  });

  it("pull-only token on a push route", async () => {
    const t = await good();
    await expectChallenge(await authorize(req(t, "POST"), push(REPO)), challenge(`repository:${REPO}:pull,push`, "insufficient_scope"), PUSH_BODY);
  });

  it("push-only token on a push route", async () => {
    const t = await good({ access: [{ type: "repository", name: REPO, actions: ["push"] }] });
    await expectChallenge(await authorize(req(t, "PUT"), push(REPO)), challenge(`repository:${REPO}:pull,push`, "insufficient_scope"), PUSH_BODY);
  });

  it("empty access on a pull route", async () => {
    await expectChallenge(
      await authorize(req(await good({ access: [] })), pull(REPO)),
      challenge(`repository:${REPO}:pull`, "insufficient_scope"),
      PULL_BODY,
    );
  });

  it("pull,push token on DELETE", async () => {
    const t = await good({ access: [{ type: "repository", name: REPO, actions: ["pull", "push"] }] });
    const res = await authorize(req(t, "DELETE"), [{ type: "repository", name: REPO, actions: ["delete"] }]);
    await expectChallenge(
      res,
      challenge(`repository:${REPO}:delete`, "insufficient_scope"),
      '{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Class":"","Name":"interop/hello","Action":"delete"}]}]}',
    );
  });

  it("catalog with a repository-scoped token", async () => {
    await expectChallenge(
      await authorize(req(await good()), CATALOG),
      challenge("registry:catalog:*", "insufficient_scope"),
      '{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"registry","Class":"","Name":"catalog","Action":"*"}]}]}',
    );
  });

  it("catalog with registry:catalog:pull is not enough", async () => {
    const t = await good({ access: [{ type: "registry", name: "catalog", actions: ["pull"] }] });
    expect((await authorize(req(t), CATALOG))!.headers.get("www-authenticate")).toBe(challenge("registry:catalog:*", "insufficient_scope"));
  });
});

describe("verified-token cache", () => {
  it("re-checks exp on a cache hit", async () => {
    let now = Date.now();
    const authz = createTokenAuthorizer({ realm: REALM, service: SERVICE, issuer: ISSUER, rootCertBundle: trusted.pem.certificate, now: () => now });
    const t = await good({ exp: Math.floor(now / 1000) + 10 });
    expect(await authz(req(t), pull(REPO))).toBeUndefined();
    expect(await authz(req(t), pull(REPO))).toBeUndefined();
    now += 71_000;
    await invalid(await authz(req(t), pull(REPO)));
  });

  it("still checks access on a cache hit", async () => {
    const t = await good();
    expect(await authorize(req(t), pull(REPO))).toBeUndefined();
    expect((await authorize(req(t, "POST"), push(REPO)))!.headers.get("www-authenticate")).toContain("insufficient_scope");
  });
});

describe("rotation", () => {
  it("trusts every certificate of the bundle", async () => {
    const osk = await other.keys.signingKey();
    const authz = createTokenAuthorizer({
      realm: REALM,
      service: SERVICE,
      issuer: ISSUER,
      rootCertBundle: `${trusted.pem.certificate}\n${other.pem.certificate}`,
    });
    expect(await authz(req(await good()), pull(REPO))).toBeUndefined();
    expect(await authz(req(await signJwt(claims(), osk, { x5c: false })), pull(REPO))).toBeUndefined();
    expect(await authz(req(await signJwt(claims(), osk)), pull(REPO))).toBeUndefined();
  });
});

describe("the Node adapter's light request", () => {
  const light = (pairs: [string, string][]): Request =>
    lightRequest({ method: "GET", url: `http://127.0.0.1:5055/v2/${REPO}/tags/list`, pairs, signal: () => new AbortController().signal });

  it("reads Authorization from the header lines, without making the request's Headers", async () => {
    const request = light([["Host", "127.0.0.1:5055"], ["Authorization", `Bearer ${await good()}`]]);
    expect(await authorize(request, pull(REPO))).toBeUndefined();
    // The lines are still offered: nothing made `request.headers`, which withdraws them.
    expect(headerPairs(request)).toHaveLength(2);
    await expectChallenge(await authorize(light([["host", "x"]]), pull(REPO)), challenge(`repository:${REPO}:pull`), PULL_BODY);
  });

  it("follows a change made to request.headers after the lines were read", async () => {
    const request = light([["authorization", `Bearer ${await good()}`]]);
    request.headers.set("authorization", "Bearer not-a-token");
    expect(headerPairs(request)).toBeUndefined();
    const res = await authorize(request, pull(REPO));
    expect(res!.headers.get("www-authenticate")).toBe(challenge(`repository:${REPO}:pull`, "invalid_token"));
    request.headers.delete("authorization");
    await expectChallenge(await authorize(request, pull(REPO)), challenge(`repository:${REPO}:pull`), PULL_BODY);
  });

  it("joins repeated Authorization lines as Headers does (so two tokens are refused, not the first taken)", async () => {
    const t = await good();
    const lines: [string, string][] = [["Authorization", `Bearer ${t}`], ["authorization", `Bearer ${t}`]];
    const fromLines = await authorize(light(lines), pull(REPO));
    const fromHeaders = await authorize(new Request(`http://127.0.0.1:5055/v2/${REPO}/tags/list`, { headers: lines }), pull(REPO));
    expect(fromLines!.status).toBe(401);
    expect(fromLines!.headers.get("www-authenticate")).toBe(challenge(`repository:${REPO}:pull`, "invalid_token"));
    expect(fromHeaders!.headers.get("www-authenticate")).toBe(fromLines!.headers.get("www-authenticate"));
  });
});
