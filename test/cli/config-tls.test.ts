/** `http.tls`, `http.http2` and `http.h2c` read from a Distribution config. */
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { configError } from "./config-error.js";

const cwd = "/srv/app";
const MINIMAL = "version: 0.1\nstorage:\n  inmemory: {}\n";

function resolve(extra: string, env: Record<string, string> = {}) {
  return resolveConfig({ document: parseConfigText(`${MINIMAL}${extra}`), env, cwd });
}

function fails(extra: string, env: Record<string, string> = {}): ConfigError {
  return configError(() => resolve(extra, env));
}

describe("http.tls", () => {
  it("is off without a certificate; HTTP/2 over TLS is on and h2c off by default", () => {
    const { config } = resolve("");
    expect(config.http.tls).toBeUndefined();
    expect(config.http).toMatchObject({ http2: true, h2c: false });
  });

  it("reads certificate, key and client CAs as absolute paths, with TLS 1.2 as the default minimum", () => {
    const { config, warnings } = resolve("http:\n  tls:\n    certificate: certs/server.crt\n    key: /etc/k.pem\n    clientcas: [ca1.pem, /etc/ca2.pem]\n");
    expect(config.http.tls).toEqual({
      certificate: "/srv/app/certs/server.crt",
      key: "/etc/k.pem",
      clientCas: ["/srv/app/ca1.pem", "/etc/ca2.pem"],
      minimumTls: "TLSv1.2",
    });
    expect(warnings.filter((w) => w.startsWith("http"))).toEqual([]);
  });

  it.each([
    ["tls1.0", "TLSv1"],
    ["tls1.1", "TLSv1.1"],
    ["tls1.2", "TLSv1.2"],
    ["TLS1.3", "TLSv1.3"],
  ])("maps minimumtls %s to %s", (name, version) => {
    expect(resolve(`http: {tls: {certificate: /c, key: /k, minimumtls: ${name}}}`).config.http.tls?.minimumTls).toBe(version);
  });

  it("refuses an unknown minimumtls, naming the key", () => {
    const error = fails("http: {tls: {certificate: /c, key: /k, minimumtls: tls1.4}}");
    expect(error.key).toBe("http.tls.minimumtls");
    expect(error.reason).toContain("tls1.0, tls1.1, tls1.2, tls1.3");
  });

  it("maps Distribution's (Go's) cipher suite names to OpenSSL's, TLS 1.3 suites kept", () => {
    const { config } = resolve(
      "http: {tls: {certificate: /c, key: /k, ciphersuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305, TLS_AES_256_GCM_SHA384]}}",
    );
    expect(config.http.tls?.ciphers).toBe("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:TLS_AES_256_GCM_SHA384");
  });

  it("refuses an unknown cipher suite, naming the key and the entry", () => {
    const error = fails("http: {tls: {certificate: /c, key: /k, ciphersuites: [TLS_AES_128_GCM_SHA256, TLS_RSA_WITH_RC4_128_SHA]}}");
    expect(error.key).toBe("http.tls.ciphersuites[1]");
    expect(error.reason).toContain('"TLS_RSA_WITH_RC4_128_SHA"');
  });

  it("requires the key with a certificate", () => {
    expect(fails("http: {tls: {certificate: /c}}").key).toBe("http.tls.key");
  });

  it.each(["key: /k", "clientcas: [/ca]", "minimumtls: tls1.3", "ciphersuites: [TLS_AES_128_GCM_SHA256]"])(
    "refuses %s without a certificate (it would be dropped silently)",
    (entry) => {
      const error = fails(`http: {tls: {${entry}}}`);
      expect(error.key).toBe(`http.tls.${entry.split(":")[0]}`);
      expect(error.reason).toContain("without http.tls.certificate");
    },
  );

  it("refuses letsencrypt with a message that says what to do instead", () => {
    const error = fails("http: {tls: {letsencrypt: {cachefile: /c, email: a@example.com}}}");
    expect(error.key).toBe("http.tls.letsencrypt");
    expect(error.reason).toMatch(/ACME.*http\.tls\.certificate/);
  });

  it("reads REGISTRY_HTTP_TLS_* overrides", () => {
    const { config } = resolve("", {
      REGISTRY_HTTP_TLS_CERTIFICATE: "/e/c.pem",
      REGISTRY_HTTP_TLS_KEY: "/e/k.pem",
      REGISTRY_HTTP_TLS_MINIMUMTLS: "tls1.3",
    });
    expect(config.http.tls).toMatchObject({ certificate: "/e/c.pem", key: "/e/k.pem", minimumTls: "TLSv1.3" });
  });
});

describe("http.http2 and http.h2c", () => {
  it("reads http2.disabled and h2c.enabled", () => {
    expect(resolve("http: {http2: {disabled: true}, h2c: {enabled: true}}").config.http).toMatchObject({ http2: false, h2c: true });
  });

  it("warns that h2c has no effect with TLS", () => {
    const { warnings } = resolve("http: {tls: {certificate: /c, key: /k}, h2c: {enabled: true}}");
    expect(warnings).toContain("http.h2c.enabled: no effect with http.tls (HTTP/2 over TLS is negotiated by ALPN; see http.http2.disabled)");
  });

  it("refuses a value that is not a boolean", () => {
    expect(fails("http: {http2: {disabled: maybe}}").key).toBe("http.http2.disabled");
  });
});

describe("registrykit.hsts (issue 41, item 13)", () => {
  const TLS = "http:\n  tls: {certificate: /c, key: /k}\n";
  it("is one year by default with TLS, and nothing without", () => {
    expect(resolve(TLS).config.http.hsts).toBe("max-age=31536000");
    expect(resolve("").config.http.hsts).toBeUndefined();
  });

  it("takes a value (sent on https behind a proxy too), false, or leaves it to http.headers", () => {
    expect(resolve(`${TLS}registrykit: {hsts: "max-age=63072000; includeSubDomains; preload"}`).config.http.hsts).toBe("max-age=63072000; includeSubDomains; preload");
    expect(resolve("registrykit: {hsts: max-age=600}").config.http.hsts).toBe("max-age=600");
    expect(resolve(`${TLS}registrykit: {hsts: false}`).config.http.hsts).toBeUndefined();
    const own = resolve("http:\n  tls: {certificate: /c, key: /k}\n  headers: {Strict-Transport-Security: [max-age=5]}\n").config.http;
    expect(own.hsts).toBeUndefined();
    expect(own.headers).toContainEqual(["Strict-Transport-Security", "max-age=5"]);
  });

  it("refuses a value that is not a Strict-Transport-Security value, naming the key", () => {
    for (const bad of ['"1 year"', '"max-age=1; evil"', "[max-age=1]"]) {
      expect(fails(`registrykit: {hsts: ${bad}}`).key, bad).toBe("registrykit.hsts");
    }
  });
});
