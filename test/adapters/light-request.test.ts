/**
 * The light request the Node adapter gives handlers that read only a
 * request's basics (registry-kit's own): it must answer those basics, behave
 * as a Request for everything else, and never reach other handlers.
 */
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { createTokenAuthorizer, createTokenService, generatedKeys } from "../../src/auth/index.js";
import { onlyReadsRequestBasics, readsRequestBasics } from "../../src/runtime/adapter-capabilities.js";
import { serve, type RunningServer } from "../../src/node/index.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close(500);
  running = undefined;
});

/** Serve `handler`, send one request, give back what the handler saw of its request. */
async function seen(handler: (request: Request) => Promise<Response>, init: RequestInit = {}, path = "/v2/x?q=1"): Promise<Request> {
  let got: Request | undefined;
  const wrapped = async (request: Request): Promise<Response> => {
    got = request;
    return handler(request);
  };
  running = await serve(onlyReadsRequestBasics(handler) ? readsRequestBasics(wrapped) : wrapped);
  const r = await fetch(`${running.url}${path}`, init);
  await r.arrayBuffer();
  return got!;
}

describe("light requests", () => {
  it("answer method, url, headers, signal and body, and are a Request for everything else", async () => {
    let checked = false;
    const handler = readsRequestBasics(async (request: Request) => {
      expect(request).toBeInstanceOf(Request);
      expect(request.constructor.name).not.toBe("Request"); // the light one
      expect(request.method).toBe("GET");
      expect(new URL(request.url).pathname).toBe("/v2/x");
      expect(request.headers.get("x-test")).toBe("a, b");
      expect(request.headers).toBeInstanceOf(Headers);
      expect(request.headers).toBe(request.headers);
      expect(request.signal).toBeInstanceOf(AbortSignal);
      expect(request.signal.aborted).toBe(false);
      expect(request.body).toBeNull();
      expect(request.bodyUsed).toBe(false);
      // the rest comes from a real Request
      expect(request.cache).toBe("default");
      expect(request.mode).toBe("cors");
      expect(await request.text()).toBe("");
      const copy = request.clone();
      expect(copy.url).toBe(request.url);
      expect(copy.headers.get("x-test")).toBe("a, b");
      // as the init of a new request (a common way to rewrite a URL)
      const rewritten = new Request("http://elsewhere/y", request);
      expect(rewritten.headers.get("x-test")).toBe("a, b");
      expect(inspect(request)).toContain("GET");
      checked = true;
      return new Response("ok");
    });
    const headers = new Headers([["x-test", "a"]]);
    headers.append("x-test", "b");
    await seen(handler, { headers });
    expect(checked).toBe(true);
  });

  it("are never given to unmarked handlers, nor for requests with a body", async () => {
    const plain = await seen(async () => new Response("ok"));
    expect(plain.constructor.name).not.toBe("LightRequest");
    expect(() => new Request(plain)).not.toThrow();
    const withBody = await seen(readsRequestBasics(async (request: Request) => new Response(await request.text())), { method: "POST", body: "hello" });
    expect(withBody.constructor.name).not.toBe("LightRequest");
  });

  it("leave Request.prototype as it was", async () => {
    const members = (): string[] =>
      Reflect.ownKeys(Request.prototype).map((key) => {
        const d = Object.getOwnPropertyDescriptor(Request.prototype, key)!;
        return `${String(key)}:${String(d.get ?? d.value)}`;
      });
    const before = members();
    const light = await seen(readsRequestBasics(async () => new Response("ok")));
    expect(light.constructor.name).toBe("LightRequest");
    expect(light.cache).toBe("default");
    expect(members()).toEqual(before);
    expect(Object.getPrototypeOf(Request.prototype)).toBe(Object.prototype);
  });

  it("registry-kit marks its registry (with its own authorizers only) and its token service", () => {
    const storage = memoryStorage();
    expect(onlyReadsRequestBasics(createRegistry({ storage, uploadSecret: "s" }))).toBe(true);
    const authorize = createTokenAuthorizer({ realm: "http://t/token", service: "s", issuer: "i", keys: generatedKeys() });
    expect(onlyReadsRequestBasics(createRegistry({ storage, uploadSecret: "s", authorize }))).toBe(true);
    // a user's own authorizer may do anything with the request: no light requests then
    expect(onlyReadsRequestBasics(createRegistry({ storage, uploadSecret: "s", authorize: async () => undefined }))).toBe(false);
    expect(onlyReadsRequestBasics(createTokenService({ issuer: "i", service: "s", keys: generatedKeys() }))).toBe(true);
  });
});
