/**
 * The start-up banner names the address actually bound. On loopback or one
 * address its first line is `registry-kit listening on <url>` (what scripts
 * and tests parse); bound to every interface (HOST=0.0.0.0, `addr: ":5000"`,
 * `[::]`) it says "all interfaces", names the bound address, and shows URLs
 * that work from this machine and from others, instead of pretending to
 * listen on 127.0.0.1. Tested on bannerLines()/listenAddress() (what `main()`
 * prints), since a test must not bind 0.0.0.0; banner-server.test.ts reads the
 * address of a real server (system project).
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import type { NetworkInterfaceInfo } from "node:os";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAllInOne, type AllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { bannerLines, listenAddress, READY } from "../../src/cli/banner.js";
import { resolveConfig } from "../../src/server/config/config.js";
import { memoryStorage } from "../../src/storage/memory/index.js";

let dir: string;
let app: AllInOne;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rk-banner-"));
  const config = resolveConfig({ document: undefined, env: { REGISTRY_KIT_DATA: dir, REGISTRY_KIT_ADMIN_PASSWORD: "Adm1nPassword" }, cwd: dir }).config;
  app = await createAllInOne(config, { origin: "http://127.0.0.1:5000", storage: memoryStorage() });
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

const nic = (address: string, family: "IPv4" | "IPv6", internal = false): NetworkInterfaceInfo =>
  ({ address, family, internal, netmask: "", mac: "00:00:00:00:00:00", cidr: null, ...(family === "IPv6" ? { scopeid: 0 } : {}) }) as NetworkInterfaceInfo;
const INTERFACES = {
  lo: [nic("127.0.0.1", "IPv4", true), nic("::1", "IPv6", true)],
  eth0: [nic("192.0.2.10", "IPv4"), nic("2001:db8::10", "IPv6"), nic("fe80::1", "IPv6")],
};
const bound = (address: string, port: number): AddressInfo => ({ address, port, family: address.includes(":") ? "IPv6" : "IPv4" });

describe("banner: the address actually bound", () => {
  it("on loopback: the first line is `listening on <url>`, as before", () => {
    const lines = bannerLines("http://127.0.0.1:5000", app.info, "0.0.0", listenAddress(bound("127.0.0.1", 5000), INTERFACES));
    expect(lines[0]).toBe(`${READY} http://127.0.0.1:5000 (registry-kit 0.0.0)`);
    expect(lines[1]).toBe("  registry        http://127.0.0.1:5000/v2/");
    expect(lines.join("\n")).not.toContain("all interfaces");
  });

  it("HOST=0.0.0.0: says all interfaces, names 0.0.0.0:port, and gives usable URLs for this machine and others", () => {
    const listen = listenAddress(bound("0.0.0.0", 5000), INTERFACES);
    expect(listen).toEqual({ address: "0.0.0.0", port: 5000, external: ["192.0.2.10"] });
    const lines = bannerLines("http://127.0.0.1:5000", app.info, "0.0.0", listen);
    expect(lines[0]).toBe(`${READY} all interfaces, 0.0.0.0:5000 (registry-kit 0.0.0)`);
    expect(lines[1]).toBe("  this machine    http://127.0.0.1:5000");
    expect(lines[2]).toBe("  other hosts     http://192.0.2.10:5000");
    expect(lines[3]).toBe("  registry        http://127.0.0.1:5000/v2/");
    // Nothing claims that it listens on 127.0.0.1 only.
    expect(lines[0]).not.toContain("127.0.0.1");
  });

  it("[::]: IPv6 in brackets, both families offered, no link-local address", () => {
    const listen = listenAddress(bound("::", 5001), INTERFACES);
    expect(listen.external).toEqual(["192.0.2.10", "2001:db8::10"]);
    const lines = bannerLines("http://[::1]:5001", app.info, "0.0.0", listen);
    expect(lines[0]).toBe(`${READY} all interfaces, [::]:5001 (registry-kit 0.0.0)`);
    expect(lines[1]).toBe("  this machine    http://[::1]:5001");
    expect(lines[2]).toBe("  other hosts     http://192.0.2.10:5001, http://[2001:db8::10]:5001");
  });

  it("with TLS: every URL is https", () => {
    const lines = bannerLines("https://127.0.0.1:5443", app.info, "0.0.0", listenAddress(bound("0.0.0.0", 5443), INTERFACES));
    expect(lines[1]).toBe("  this machine    https://127.0.0.1:5443");
    expect(lines[2]).toBe("  other hosts     https://192.0.2.10:5443");
    expect(lines[3]).toBe("  registry        https://127.0.0.1:5443/v2/");
    const bare = bannerLines("https://127.0.0.1:5443", app.info, "0.0.0", listenAddress(bound("0.0.0.0", 5443), { lo: INTERFACES.lo }));
    expect(bare[2]).toBe("  other hosts     https://<this machine's name or address>:5443");
  });

  it("every interface on a machine without other addresses: says how to form the URL", () => {
    const lines = bannerLines("http://127.0.0.1:5000", app.info, "0.0.0", listenAddress(bound("0.0.0.0", 5000), { lo: INTERFACES.lo }));
    expect(lines[2]).toBe("  other hosts     http://<this machine's name or address>:5000");
  });
});
