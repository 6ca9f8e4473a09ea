/**
 * The in-memory fast lane between handlers and the Node adapter: an
 * InMemoryResponse must behave as `new Response(bytes, init)` to everyone but
 * the adapter, and handlers only build one for requests the adapter marked.
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createTokenAuthorizer, generatedKeys } from "../../src/auth/index.js";
import {
  InMemoryResponse,
  inMemoryResponse,
  markInMemoryReader,
  takeInMemoryBody,
} from "../../src/http/in-memory-response.js";
import { serve, type RunningServer } from "../../src/node/index.js";
import { capabilitiesOf, readsRequestBasics } from "../../src/runtime/adapter-capabilities.js";
import { createRegistry } from "../../src/registry/index.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { pushImage } from "../registry/helpers.js";

const text = '{"hello":"wörld ✓"}';
const bytes = new TextEncoder().encode(text);
const init = (): ResponseInit => ({ status: 201, statusText: "Made", headers: { "content-type": "application/json", "x-a": "1" } });
const both = (): [Response, Response] => [new InMemoryResponse(bytes.slice(), init()), new Response(bytes.slice(), init())];

describe("InMemoryResponse reads like a Response", () => {
  it.each(["text", "json", "arrayBuffer", "bytes", "blob"] as const)("%s() gives what a plain Response gives", async (method) => {
    const [fast, plain] = both();
    const norm = async (v: unknown): Promise<unknown> => {
      if (v instanceof Blob) return { type: v.type, text: await v.text() };
      if (v instanceof ArrayBuffer) return [...new Uint8Array(v)];
      if (v instanceof Uint8Array) return [...v];
      return v;
    };
    // Node 20's Response has no bytes(): the plain side answers it from arrayBuffer().
    const call = (r: Response): Promise<unknown> =>
      method === "bytes" && typeof (r as { bytes?: unknown }).bytes !== "function"
        ? r.arrayBuffer().then((b) => new Uint8Array(b))
        : (r[method as keyof Response] as () => Promise<unknown>).call(r);
    const got = await call(fast);
    if (method === "bytes") expect(got).toBeInstanceOf(Uint8Array);
    expect(await norm(got)).toEqual(await norm(await call(plain)));
    expect(fast.bodyUsed).toBe(true);
    await expect(fast.text()).rejects.toThrow(TypeError);
    await expect(plain.text()).rejects.toThrow(TypeError);
  });

  it("keeps status, statusText, headers and ok of a plain Response", () => {
    const [fast, plain] = both();
    expect([fast.status, fast.statusText, fast.ok, [...fast.headers]]).toEqual([plain.status, plain.statusText, plain.ok, [...plain.headers]]);
    expect(fast).toBeInstanceOf(Response);
  });

  it("hands out a body stream with the bytes, and then cannot be read again", async () => {
    const fast = new InMemoryResponse(bytes, init());
    expect(fast.bodyUsed).toBe(false);
    const body = fast.body;
    expect(fast.body).toBe(body); // the same stream every time
    expect(await new Response(body).text()).toBe(text);
    expect(fast.bodyUsed).toBe(true);
    await expect(fast.text()).rejects.toThrow(TypeError);
  });

  it("reads through the stream when body was taken but not yet read", async () => {
    const fast = new InMemoryResponse(bytes, init());
    void fast.body;
    expect(await fast.text()).toBe(text);
  });

  it("can be re-wrapped by middleware: new Response(r.body, r)", async () => {
    const fast = new InMemoryResponse(bytes, init());
    const wrapped = new Response(fast.body, fast);
    expect(wrapped.status).toBe(201);
    expect(await wrapped.text()).toBe(text);
  });

  it("clones before and after the stream was taken", async () => {
    const a = new InMemoryResponse(bytes, init());
    const b = a.clone();
    expect(await a.text()).toBe(text);
    expect(await b.text()).toBe(text);
    const c = new InMemoryResponse(bytes, init());
    void c.body;
    const d = c.clone();
    expect(await d.text()).toBe(text);
    expect(await c.text()).toBe(text);
    const used = new InMemoryResponse(bytes, init());
    await used.text();
    expect(() => used.clone()).toThrow(TypeError);
  });

  it("never hands out or lets anyone change the bytes it was given", async () => {
    const source = bytes.slice();
    const fast = new InMemoryResponse(source, init());
    const copy = new Uint8Array(await fast.clone().arrayBuffer());
    copy.fill(0);
    const reader = fast.body.getReader();
    const { value } = await reader.read();
    value!.fill(0);
    expect(source).toEqual(bytes);
  });

  it("formData() parses a form body", async () => {
    const form = new InMemoryResponse(new TextEncoder().encode("a=1&b=two"), { headers: { "content-type": "application/x-www-form-urlencoded" } });
    const data = await form.formData();
    expect([data.get("a"), data.get("b")]).toEqual(["1", "two"]);
  });
});

describe("takeInMemoryBody", () => {
  it("gives the adapter the bytes once, and nothing for other responses", () => {
    const fast = new InMemoryResponse(bytes, init());
    const taken = takeInMemoryBody(fast);
    expect(taken?.bytes).toBe(bytes);
    expect([...taken!.headers!]).toEqual(Object.entries(init().headers!));
    expect(takeInMemoryBody(fast)).toBeUndefined();
    expect(fast.bodyUsed).toBe(true);
    expect(takeInMemoryBody(new Response(bytes))).toBeUndefined();
  });

  it("leaves the headers to the Response once someone read them (they may have changed)", () => {
    const fast = new InMemoryResponse(bytes, init());
    fast.headers.set("x-a", "changed");
    const taken = takeInMemoryBody(fast);
    expect(taken?.bytes).toBe(bytes);
    expect(taken?.headers).toBeUndefined();
    expect(fast.headers.get("x-a")).toBe("changed");
    expect(fast.headers.get("content-type")).toBe("application/json");
  });

  it("gives nothing once someone took the body stream (it is theirs to read)", () => {
    const fast = new InMemoryResponse(bytes, init());
    void fast.body;
    expect(takeInMemoryBody(fast)).toBeUndefined();
  });
});

describe("inMemoryResponse", () => {
  it("builds a plain Response unless the request's adapter reads in-memory bodies", async () => {
    const plainRequest = new Request("http://x/");
    const plain = inMemoryResponse(plainRequest, bytes, init());
    expect(plain).not.toBeInstanceOf(InMemoryResponse);
    expect(await plain.text()).toBe(text);
    expect(inMemoryResponse(undefined, bytes, init())).not.toBeInstanceOf(InMemoryResponse);
    const marked = new Request("http://x/");
    markInMemoryReader(marked);
    const fast = inMemoryResponse(marked, bytes, init());
    expect(fast).toBeInstanceOf(InMemoryResponse);
    expect(await fast.text()).toBe(text);
  });
});

describe("through the Node adapter", () => {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close(500);
    running = undefined;
  });

  it("serves manifests, errors and listings whole, directly and through wrapping middleware", async () => {
    const registry = createRegistry({ storage: memoryStorage(), uploadSecret: "s" });
    const image = await pushImage(registry, "app", "v1");
    const mediaType = "application/vnd.oci.image.manifest.v1+json";
    const manifestBytes = new TextEncoder().encode(image.manifest);
    const seen: string[] = [];
    // A wrapper that re-wraps every response, as logging or header middleware does.
    const wrapped = async (request: Request): Promise<Response> => {
      const response = await registry(request);
      seen.push(response.constructor.name);
      const url = new URL(request.url);
      if (url.searchParams.has("mark")) response.headers.set("x-marked", "yes");
      return url.searchParams.has("wrap") ? new Response(response.body, response) : response;
    };
    running = await serve(wrapped);
    for (const query of ["", "?wrap=1"]) {
      const manifest = await fetch(`${running.url}/v2/app/manifests/v1${query}`, { headers: { accept: mediaType } });
      expect(manifest.status).toBe(200);
      expect(new Uint8Array(await manifest.arrayBuffer())).toEqual(manifestBytes);
      expect(manifest.headers.get("content-length")).toBe(String(manifestBytes.byteLength));
      const missing = await fetch(`${running.url}/v2/app/manifests/nope${query}`);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe("MANIFEST_UNKNOWN");
      const tags = await fetch(`${running.url}/v2/app/tags/list${query}`);
      expect(await tags.json()).toEqual({ name: "app", tags: ["v1"] });
      const head = await fetch(`${running.url}/v2/app/manifests/v1${query}`, { method: "HEAD", headers: { accept: mediaType } });
      expect(head.headers.get("content-length")).toBe(String(manifestBytes.byteLength));
      expect((await head.arrayBuffer()).byteLength).toBe(0);
    }
    // A header a middleware set on an in-memory response is sent.
    const marked = await fetch(`${running.url}/v2/app/manifests/v1?mark=1`, { headers: { accept: mediaType } });
    expect(marked.headers.get("x-marked")).toBe("yes");
    expect(marked.headers.get("docker-content-digest")).toBe(image.digest);
    expect(new Uint8Array(await marked.arrayBuffer())).toEqual(manifestBytes);
    // The fast lane was taken: the handler saw requests marked by the adapter.
    expect(seen).toContain("InMemoryResponse");
  });

  it("offers the capability on its full and its light requests, not on a copy (issue 42: one typed capability)", async () => {
    const offered: Record<string, boolean> = {};
    const probe = async (request: Request): Promise<Response> => {
      const kind = new URL(request.url).pathname.slice(1);
      offered[kind] = capabilitiesOf(request)?.respondInMemory !== undefined;
      offered[`${kind}-copy`] = capabilitiesOf(new Request(request.url, { method: request.method, headers: request.headers })) !== undefined;
      return inMemoryResponse(request, bytes, init());
    };
    running = await serve(probe);
    const full = await fetch(`${running.url}/full`);
    expect(await full.text()).toBe(text);
    await running.close(500);
    running = await serve(readsRequestBasics(probe));
    const light = await fetch(`${running.url}/light`);
    expect(await light.text()).toBe(text);
    expect(offered).toEqual({ full: true, "full-copy": false, light: true, "light-copy": false });
  });

  it("writes the 401 challenge with each header line once, its body whole, and for HEAD the length alone", async () => {
    const keys = generatedKeys({ alg: "ES256" });
    const authorize = createTokenAuthorizer({ realm: "http://auth.test/token", service: "reg", issuer: "iss", keys });
    running = await serve(createRegistry({ storage: memoryStorage(), uploadSecret: "s", authorize }));
    const { port } = new URL(running.url);
    const raw = (method: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect(Number(port), "127.0.0.1", () => socket.end(`${method} /v2/app/manifests/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
        let text = "";
        socket.setEncoding("latin1").on("data", (d: string) => (text += d)).on("end", () => resolve(text)).on("error", reject);
      });
    const body = '{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Class":"","Name":"app","Action":"pull"}]}]}';
    const expected = {
      "www-authenticate": 'Bearer realm="http://auth.test/token",service="reg",scope="repository:app:pull"',
      "content-type": "application/json; charset=utf-8",
      "content-length": String(body.length),
      "docker-distribution-api-version": "registry/2.0",
      "container-distribution-api-version": "registry/2.0",
      "x-content-type-options": "nosniff",
    };
    for (const method of ["GET", "HEAD", "GET"]) {
      const [head, rest] = (await raw(method)).split("\r\n\r\n") as [string, string];
      const [status, ...lines] = head.split("\r\n");
      expect(status).toBe("HTTP/1.1 401 Unauthorized");
      const names = lines.map((l) => l.slice(0, l.indexOf(":")).toLowerCase());
      expect(new Set(names).size, head).toBe(names.length);
      const got = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      for (const [name, value] of Object.entries(expected)) expect(got[name], name).toBe(value);
      expect(rest).toBe(method === "HEAD" ? "" : body);
    }
  });
});

describe("writeResponse with in-memory bodies: written together at the end of the loop's turn", () => {
  it("writes nothing before the turn ends, resolves once written, and a failing write neither crashes nor holds back the others", async () => {
    const { createServer } = await import("node:http");
    const { writeResponse } = await import("../../src/node/index.js");
    const seen: string[] = [];
    const server = createServer((req, res) => {
      const bad = req.url === "/bad";
      // A header value Node refuses: writeHead throws when the queued write runs.
      const response = new InMemoryResponse(bytes.slice(), { status: 200, headers: bad ? { "x-bad": "a\u0001b" } : { "content-type": "application/json" } });
      const written = writeResponse(response, res, "GET");
      seen.push(`${req.url} queued, headers sent: ${res.headersSent}`);
      written.then(
        () => seen.push(`${req.url} written, ended: ${res.writableEnded}`),
        (error: NodeJS.ErrnoException) => {
          seen.push(`${req.url} failed: ${error.code}`);
          res.writeHead(500).end();
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      const [good, bad] = await Promise.all([fetch(`http://127.0.0.1:${port}/good`), fetch(`http://127.0.0.1:${port}/bad`)]);
      expect([good.status, await good.text(), bad.status]).toEqual([200, text, 500]);
      expect(seen).toContain("/good queued, headers sent: false");
      expect(seen).toContain("/bad queued, headers sent: false");
      expect(seen).toContain("/good written, ended: true");
      expect(seen).toContain("/bad failed: ERR_INVALID_CHAR");
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
