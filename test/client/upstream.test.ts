/**
 * Issue 41, item 2: `registryUpstream` sends its configured credentials only
 * to token realms on the upstream's own origin and to the `realms` configured
 * for it; any other realm a `401` names gets a token request without them, and
 * one `warn` log event. The hosts are answered by an in-process fetch that
 * records the `Authorization` each one received. Also: the transport calls its
 * fetch as a plain function (workerd's fetch refuses another `this`).
 */
import { describe, expect, it } from "vitest";
import { registryUpstream } from "../../src/client/index.js";
import type { LogEvent } from "../../src/http/log.js";

const CREDS = { username: "mirror", password: "Mirror-secret-1" };
const BASIC = `Basic ${btoa(`${CREDS.username}:${CREDS.password}`)}`;

/** An upstream at `registry` whose challenge names `realm`; every request's host and Authorization are kept. */
function hosts(registry: string, realm: string) {
  const seen: { url: string; authorization: string | null }[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    seen.push({ url: `${url.origin}${url.pathname}`, authorization: request.headers.get("authorization") });
    if (url.href.startsWith(realm)) return Response.json({ token: "issued", expires_in: 300 });
    if (url.origin === new URL(registry).origin && url.pathname.startsWith("/v2/")) {
      if (request.headers.get("authorization") !== "Bearer issued") {
        return new Response(null, { status: 401, headers: { "www-authenticate": `Bearer realm="${realm}",service="upstream"` } });
      }
      return new Response(null, { status: 200, headers: { "content-length": "3" } });
    }
    return new Response(null, { status: 404 });
  }) as typeof globalThis.fetch;
  const toRealm = () => seen.filter((s) => s.url.startsWith(realm.replace(/\?.*$/, "")));
  return { seen, fetch, toRealm };
}

function upstreamWith(registry: string, realm: string, realms?: string[]) {
  const h = hosts(registry, realm);
  const events: LogEvent[] = [];
  const upstream = registryUpstream({ url: registry, fetch: h.fetch, credentials: CREDS, log: (e) => events.push(e), ...(realms ? { realms } : {}) });
  return { ...h, events, upstream };
}

describe("registryUpstream: credentials go only to trusted token realms", () => {
  it("a realm on another host gets no credentials, one warn event, and the pull goes on anonymously", async () => {
    const { upstream, toRealm, events } = upstreamWith("https://upstream.test", "https://collector.evil.test/token");
    expect(await upstream.headBlob("lib/app", `sha256:${"a".repeat(64)}`)).toEqual({ size: 3 });
    expect(await upstream.headBlob("lib/app2", `sha256:${"a".repeat(64)}`)).toEqual({ size: 3 });
    expect(toRealm().length).toBeGreaterThan(0);
    expect(toRealm().map((s) => s.authorization)).toEqual(toRealm().map(() => null));
    const warned = events.filter((e) => e.level === "warn");
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ upstream: "https://upstream.test", realm: "https://collector.evil.test/token" });
    expect(JSON.stringify(events)).not.toContain(CREDS.password);
  });

  it("the same host on another port or scheme is another origin: no credentials", async () => {
    for (const realm of ["https://upstream.test:8443/token", "http://upstream.test/token"]) {
      const { upstream, toRealm } = upstreamWith("https://upstream.test", realm);
      await upstream.headBlob("lib/app", `sha256:${"a".repeat(64)}`);
      expect(toRealm().map((s) => s.authorization)).toEqual([null]);
    }
  });

  it("a realm on the upstream's own origin gets the credentials", async () => {
    const { upstream, toRealm, events } = upstreamWith("https://upstream.test", "https://upstream.test/token");
    await upstream.headBlob("lib/app", `sha256:${"a".repeat(64)}`);
    expect(toRealm().map((s) => s.authorization)).toEqual([BASIC]);
    expect(events).toEqual([]);
  });

  it("Docker Hub: auth.docker.io gets the credentials once configured in realms, and only that path", async () => {
    const hub = upstreamWith("https://registry-1.docker.io", "https://auth.docker.io/token", ["https://auth.docker.io/token"]);
    await hub.upstream.headBlob("library/alpine", `sha256:${"a".repeat(64)}`);
    expect(hub.toRealm().map((s) => s.authorization)).toEqual([BASIC]);
    expect(hub.events).toEqual([]);

    const unconfigured = upstreamWith("https://registry-1.docker.io", "https://auth.docker.io/token");
    await unconfigured.upstream.headBlob("library/alpine", `sha256:${"a".repeat(64)}`);
    expect(unconfigured.toRealm().map((s) => s.authorization)).toEqual([null]);
    expect(unconfigured.events.map((e) => e.realm)).toEqual(["https://auth.docker.io/token"]);

    const otherPath = upstreamWith("https://registry-1.docker.io", "https://auth.docker.io/steal", ["https://auth.docker.io/token"]);
    await otherPath.upstream.headBlob("library/alpine", `sha256:${"a".repeat(64)}`);
    expect(otherPath.toRealm().map((s) => s.authorization)).toEqual([null]);

    const underPrefix = upstreamWith("https://registry-1.docker.io", "https://auth.docker.io/v2/token", ["https://auth.docker.io/v2/"]);
    await underPrefix.upstream.headBlob("library/alpine", `sha256:${"a".repeat(64)}`);
    expect(underPrefix.toRealm().map((s) => s.authorization)).toEqual([BASIC]);
  });

  it("an upstream without credentials logs nothing about realms (Docker Hub pulled anonymously)", async () => {
    const h = hosts("https://registry-1.docker.io", "https://auth.docker.io/token");
    const events: LogEvent[] = [];
    const upstream = registryUpstream({ url: "https://registry-1.docker.io", fetch: h.fetch, log: (e) => events.push(e) });
    expect(await upstream.headBlob("library/alpine", `sha256:${"a".repeat(64)}`)).toEqual({ size: 3 });
    expect(h.toRealm().map((s) => s.authorization)).toEqual([null]);
    expect(events).toEqual([]);
  });

  it("refuses a configured realm that is not an http(s) URL", () => {
    expect(() => registryUpstream({ url: "https://upstream.test", realms: ["auth.docker.io"] })).toThrow(TypeError);
    expect(() => registryUpstream({ url: "https://upstream.test", realms: ["ftp://auth.docker.io/"] })).toThrow(TypeError);
  });
});

describe("registryUpstream: the fetch is called as a plain function", () => {
  it("works with a fetch that refuses any `this` but undefined or globalThis (workerd's)", async () => {
    const { fetch } = hosts("https://upstream.test", "https://upstream.test/token");
    const strict = function (this: unknown, input: RequestInfo | URL, init?: RequestInit) {
      if (this !== undefined && this !== globalThis) throw new TypeError("Illegal invocation: function called with incorrect `this` reference");
      return fetch(input, init);
    } as typeof globalThis.fetch;
    const upstream = registryUpstream({ url: "https://upstream.test", fetch: strict, credentials: CREDS });
    expect(await upstream.headBlob("lib/app", `sha256:${"a".repeat(64)}`)).toEqual({ size: 3 });
  });
});
