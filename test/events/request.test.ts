/**
 * The `request` record of an event reads the same values from the Node
 * adapter's raw header pairs as from a `Headers` object: any case of the
 * names, repeated lines, whitespace, the X-Forwarded-For chain, the clipping
 * of long values, and the fallbacks (Host from the URL, a fresh id).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { requestRecord } from "../../src/events/request.js";
import { headerPairs, headerValue } from "../../src/http/header-pairs.js";
import { lightRequest } from "../../src/node/light-request.js";

const signal = new AbortController().signal;
const light = (pairs: [string, string][], url = "http://reg.test:5000/v2/a/manifests/v1"): Request => lightRequest({ method: "GET", url, pairs, signal: () => signal });
const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("requestRecord", () => {
  it("reads the raw header pairs of a light request without making its Headers", () => {
    const request = light([["Host", "reg.test"], ["user-agent", " skopeo/1.13 "], ["X-Forwarded-For", "10.0.0.7, 10.0.0.1"], ["X-Request-Id", "r-1"]]);
    expect(headerPairs(request)).toHaveLength(4);
    expect(requestRecord(request)).toEqual({ id: "r-1", method: "GET", useragent: "skopeo/1.13", addr: "10.0.0.7", host: "reg.test" });
    expect(headerPairs(new Request("http://reg.test/"))).toBeUndefined();
  });

  it("gives a fresh UUID id without X-Request-Id, and the URL's host without Host", () => {
    const record = requestRecord(light([], "http://fallback.test:5000/v2/"));
    expect(record.id).toMatch(UUID_V8);
    expect(record.host).toBe("fallback.test:5000");
    expect(record.useragent).toBe("");
  });

  it("reads the same record from raw pairs as from Headers, for any header lines", () => {
    const names = fc.constantFrom("Host", "host", "HOST", "User-Agent", "user-agent", "X-Request-Id", "x-request-id", "X-Forwarded-For", "x-forwarded-for", "X-Real-Ip", "X-Real-IP", "Accept", "Authorization", "X-Other-Header");
    // Header values as Node hands them over: visible ASCII and spaces, no leading or trailing whitespace.
    const value = fc.oneof(
      fc.stringMatching(/^[!-~]([ -~]{0,40}[!-~])?$/),
      fc.constantFrom("10.0.0.7, 10.0.0.1", ",10.0.0.9", "x".repeat(600)),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(names, value), { maxLength: 8 }), (pairs) => {
        const fromPairs = requestRecord(light(pairs));
        const fromHeaders = requestRecord(new Request("http://reg.test:5000/v2/a/manifests/v1", { headers: pairs }));
        const strip = ({ id, ...rest }: typeof fromPairs): [boolean, typeof rest] => [UUID_V8.test(id), rest];
        if (pairs.some(([name]) => name.toLowerCase() === "x-request-id")) expect(fromPairs).toEqual(fromHeaders);
        else expect(strip(fromPairs)).toEqual(strip(fromHeaders));
      }),
      { numRuns: 500 },
    );
  });
});

describe("headerValue", () => {
  it("answers as Headers.get from the header lines, for any names, cases and repeats", () => {
    const names = fc.constantFrom("Authorization", "authorization", "AUTHORIZATION", "Range", "range", "X-A", "x-a");
    const value = fc.stringMatching(/^[!-~]([ -~]{0,20}[!-~])?$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(names, value), { maxLength: 6 }), fc.constantFrom("authorization", "range", "x-a", "x-b"), (pairs, name) => {
        expect(headerValue(light(pairs), name)).toBe(new Headers(pairs).get(name));
      }),
      { numRuns: 500 },
    );
  });
});
