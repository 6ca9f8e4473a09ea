/**
 * `http.tls` (certificate, key, client CAs, minimum version, cipher suites),
 * `http.http2.disabled` and `http.h2c.enabled`, read into what
 * `serve()`'s TLS options take. Cipher suites are written in Distribution's
 * (Go's) names and mapped to OpenSSL's here.
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import type { HttpTlsConfig } from "./config-types.js";
import { bool, ConfigError, str, stringList } from "./config-values.js";

/** Distribution's `minimumtls` names → Node's `minVersion`. */
const TLS_VERSIONS: Record<string, HttpTlsConfig["minimumTls"]> = {
  "tls1.0": "TLSv1",
  "tls1.1": "TLSv1.1",
  "tls1.2": "TLSv1.2",
  "tls1.3": "TLSv1.3",
};

/**
 * Go's cipher suite names (what Distribution's `ciphersuites` takes) → the
 * OpenSSL names Node's `ciphers` takes. The TLS 1.3 suites keep their names.
 * Go's RC4 and 3DES suites are left out: OpenSSL 3 no longer offers them.
 */
const CIPHER_SUITES: Record<string, string> = {
  TLS_RSA_WITH_AES_128_CBC_SHA: "AES128-SHA",
  TLS_RSA_WITH_AES_256_CBC_SHA: "AES256-SHA",
  TLS_RSA_WITH_AES_128_CBC_SHA256: "AES128-SHA256",
  TLS_RSA_WITH_AES_128_GCM_SHA256: "AES128-GCM-SHA256",
  TLS_RSA_WITH_AES_256_GCM_SHA384: "AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: "ECDHE-ECDSA-AES128-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: "ECDHE-ECDSA-AES256-SHA",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: "ECDHE-RSA-AES128-SHA",
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: "ECDHE-RSA-AES256-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: "ECDHE-ECDSA-AES128-SHA256",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: "ECDHE-RSA-AES128-SHA256",
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: "ECDHE-RSA-AES128-GCM-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: "ECDHE-ECDSA-AES128-GCM-SHA256",
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: "ECDHE-RSA-AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: "ECDHE-ECDSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: "ECDHE-ECDSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305",
  TLS_AES_128_GCM_SHA256: "TLS_AES_128_GCM_SHA256",
  TLS_AES_256_GCM_SHA384: "TLS_AES_256_GCM_SHA384",
  TLS_CHACHA20_POLY1305_SHA256: "TLS_CHACHA20_POLY1305_SHA256",
};

/**
 * `http.tls`, or `undefined` for plain http. As in Distribution, TLS is on
 * when `certificate` is set; then `key` is required. Client CAs, a minimum
 * version or cipher suites without a certificate are an error (they would
 * otherwise be dropped silently); so is `letsencrypt` (no ACME here).
 */
export function resolveTlsConfig({ get, opt, named, abs }: ConfigReader): HttpTlsConfig | undefined {
  const letsencrypt = get("http.tls.letsencrypt");
  if (letsencrypt !== undefined && letsencrypt !== null) {
    throw new ConfigError(named("http.tls.letsencrypt"),
      "automatic certificates (ACME) are not supported by registry-kit; get the certificate with an ACME client (certbot, lego, ...) and set http.tls.certificate and http.tls.key");
  }
  const certificate = opt("http.tls.certificate", str);
  if (certificate === undefined) {
    for (const key of ["http.tls.key", "http.tls.clientcas", "http.tls.minimumtls", "http.tls.ciphersuites"]) {
      if (get(key) !== undefined && get(key) !== null) throw new ConfigError(named(key), "has no effect without http.tls.certificate (TLS is off)");
    }
    return undefined;
  }
  const key = opt("http.tls.key", str);
  if (key === undefined) throw new ConfigError(named("http.tls.key"), "is required with http.tls.certificate");
  const suites = opt("http.tls.ciphersuites", stringList);
  return {
    certificate: abs(certificate),
    key: abs(key),
    clientCas: (opt("http.tls.clientcas", stringList) ?? []).map(abs),
    minimumTls: opt("http.tls.minimumtls", tlsVersion) ?? "TLSv1.2",
    ...(suites !== undefined ? { ciphers: suites.map((suite, i) => cipherSuite(`${named("http.tls.ciphersuites")}[${i}]`, suite)).join(":") } : {}),
  };
}

/** `http.http2.disabled` (HTTP/2 over TLS is on unless it is true) and `http.h2c.enabled`. */
export function resolveHttp2({ opt }: ConfigReader): { http2: boolean; h2c: boolean } {
  return {
    http2: !(opt("http.http2.disabled", bool) ?? false),
    h2c: opt("http.h2c.enabled", bool) ?? false,
  };
}

function tlsVersion(key: string, value: unknown): HttpTlsConfig["minimumTls"] {
  const name = str(key, value).toLowerCase();
  const version = TLS_VERSIONS[name];
  if (version === undefined) throw new ConfigError(key, `expected one of ${Object.keys(TLS_VERSIONS).join(", ")}, got ${JSON.stringify(value)}`);
  return version;
}

function cipherSuite(key: string, name: string): string {
  const openssl = CIPHER_SUITES[name.trim().toUpperCase()];
  if (openssl === undefined) {
    throw new ConfigError(key, `unknown or unsupported cipher suite ${JSON.stringify(name)}; supported: ${Object.keys(CIPHER_SUITES).join(", ")}`);
  }
  return openssl;
}
