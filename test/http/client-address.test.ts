import { describe, expect, it } from "vitest";
import { clientAddress, rememberPeer } from "../../src/http/client-address.js";

describe("clientAddress", () => {
  const request = (xff?: string) => {
    const r = new Request("http://r.test/", { headers: xff ? { "x-forwarded-for": xff } : {} });
    rememberPeer(r, "::ffff:10.0.0.5");
    return r;
  };

  it("is the socket peer unless the proxy is trusted: a client's X-Forwarded-For changes nothing", () => {
    expect(clientAddress(request("203.0.113.9"), false)).toBe("10.0.0.5");
    expect(clientAddress(request(), false)).toBe("10.0.0.5");
  });

  it("behind a trusted proxy, the last X-Forwarded-For entry (the one the proxy appended), not the client's first", () => {
    expect(clientAddress(request("1.2.3.4, 203.0.113.9"), true)).toBe("203.0.113.9");
    expect(clientAddress(request(), true)).toBe("10.0.0.5");
  });

  it("is undefined for a request no adapter made", () => {
    expect(clientAddress(new Request("http://r.test/"), false)).toBeUndefined();
  });
});
