/**
 * `absolute()` keeps the origin of the last request's URL instead of parsing
 * each time: its answers must be exactly what `new URL(path, request.url)`
 * gives, for any request URL and path, including after other hosts (some a
 * prefix of another) and after the same path on another host. `digestUrl()`
 * keeps its last answer by the path's parts: the same, interleaved with it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { absolute, digestUrl } from "../../src/registry/responses.js";

const hosts = ["127.0.0.1:5000", "Registry.Example:443", "r.example:80", "[::1]:5000", "user:pw@h.example", "h.example", "xn--bcher-kva.example", "H.EXAMPLE.:8080", "h.example:80", "h.example:8080", "h.example.org"];
const paths = ["/v2/team/app/manifests/sha256:abc", "/v2/a/blobs/sha256:0f", "/v2/a/../b/blobs/x", "/v2/a/./b", "/v2/a b/x", "/v2/a/blobs/uploads/u?_state=x%2Fy", "/v2/%2e%2e/x", "//evil/x", "/v2/ä/x"];

describe("absolute", () => {
  it("gives what new URL(path, request.url).href gives, whatever came before", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("http", "https"), fc.constantFrom(...hosts), fc.constantFrom("/v2/", "/v2/x/manifests/latest", "/"), fc.constantFrom(...paths)), { minLength: 1, maxLength: 8 }), (cases) => {
        for (const [scheme, host, requestPath, path] of cases) {
          const url = `${scheme}://${host}${requestPath}`;
          const request = { url } as Request;
          expect(absolute(request, path)).toBe(new URL(path, url).href);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("digestUrl gives what absolute gives for the joined path, interleaved with absolute, whatever came before", () => {
    const names = ["team/app", "team/ap", "a b"];
    const digests = ["sha256:abc", "x/../y"];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("http", "https"), fc.constantFrom(...hosts), fc.constantFrom("/v2", ""), fc.constantFrom(...names), fc.constantFrom("manifests", "blobs") as fc.Arbitrary<"manifests" | "blobs">, fc.constantFrom(...digests), fc.constantFrom(...paths), fc.boolean()), { minLength: 1, maxLength: 10 }),
        (cases) => {
          for (const [scheme, host, prefix, name, kind, digest, other, both] of cases) {
            const url = `${scheme}://${host}${prefix}/${name}/manifests/latest`;
            const request = { url } as Request;
            expect(digestUrl(request, prefix, name, kind, digest)).toBe(new URL(`${prefix}/${name}/${kind}/${digest}`, url).href);
            if (both) expect(absolute(request, other)).toBe(new URL(other, url).href);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
