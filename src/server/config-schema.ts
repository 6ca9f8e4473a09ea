/**
 * Every configuration key the CLI knows, and what it does with it.
 * `ok`: supported. `any`: supported, free-form below (e.g. header names).
 * `ignored`: a Distribution key registry-kit does not implement; start-up
 * warns and goes on. `refused`: a Distribution key whose silent omission
 * would weaken security or change behaviour (storage drivers
 * other than filesystem, inmemory and s3); start-up stops. Keys not listed at all are warned as unknown.
 *
 * @module
 */

/** What the CLI does with a key, or the keys below it. */
export type KeySpec = "ok" | "any" | "ignored" | "refused" | { readonly [key: string]: KeySpec };

/** The schema of a Distribution `config.yml` plus the `registrykit` section. */
export const SCHEMA: KeySpec = {
  version: "ok",
  loglevel: "ignored",
  log: {
    level: "ok",
    accesslog: { disabled: "ok" },
    formatter: "ignored",
    fields: "ignored",
    hooks: "ignored",
    reportcaller: "ignored",
  },
  http: {
    addr: "ok",
    net: "ok",
    host: "ok",
    secret: "ok",
    headers: "any",
    draintimeout: "ok",
    prefix: "ignored",
    relativeurls: "ignored",
    debug: { addr: "ok", prometheus: { enabled: "ok", path: "ok" } },
    http2: { disabled: "ok" },
    h2c: { enabled: "ok" },
    // `letsencrypt` is refused with its own message in config-tls.ts.
    tls: { certificate: "ok", key: "ok", clientcas: "ok", minimumtls: "ok", ciphersuites: "ok", letsencrypt: "any" },
  },
  storage: {
    filesystem: { rootdirectory: "ok", maxthreads: "ignored" },
    inmemory: "any",
    delete: { enabled: "ok" },
    cache: "ignored",
    maintenance: {
      uploadpurging: { enabled: "ok", age: "ok", interval: "ok", dryrun: "ok" },
      readonly: "ignored",
    },
    redirect: { disable: "ok" },
    tag: "ignored",
    s3: {
      bucket: "ok",
      region: "ok",
      regionendpoint: "ok",
      forcepathstyle: "ok",
      accesskey: "ok",
      secretkey: "ok",
      sessiontoken: "ok",
      rootdirectory: "ok",
      chunksize: "ok",
      secure: "ok",
      v4auth: "ok",
      // Checked by value in config.ts: encryption cannot be dropped silently.
      encrypt: "ok",
      keyid: "ok",
      skipverify: "ignored",
      storageclass: "ignored",
      objectacl: "ignored",
      useragent: "ignored",
      usedualstack: "ignored",
      accelerate: "ignored",
      loglevel: "ignored",
      multipartcopychunksize: "ignored",
      multipartcopymaxconcurrency: "ignored",
      multipartcopythresholdsize: "ignored",
      credentialsconfigpath: "ignored",
    },
    azure: "refused",
    gcs: "refused",
    swift: "refused",
    oss: "refused",
  },
  auth: {
    token: {
      realm: "ok",
      service: "ok",
      issuer: "ok",
      rootcertbundle: "ok",
      autoredirect: "ok",
      autoredirectpath: "ok",
      jwks: "ok",
      signingalgorithms: "ok",
    },
    htpasswd: { realm: "ok", path: "ok" },
    silly: "refused",
  },
  catalog: { maxentries: "ok" },
  middleware: "ignored",
  reporting: "ignored",
  notifications: { endpoints: "any", events: { includereferences: "ok" } },
  redis: "ignored",
  health: {
    storagedriver: { enabled: "ok", interval: "ok", threshold: "ok" },
    // Lists: their entries are checked by config-debug.ts.
    file: "ok",
    http: "ok",
    tcp: "ok",
  },
  proxy: { remoteurl: "ok", username: "ok", password: "ok", ttl: "ok", exec: "refused" },
  validation: "ignored",
  compatibility: "ignored",
  registrykit: {
    keydirectory: "ok",
    trustproxy: "ok",
    tokenservice: {
      enabled: "ok",
      path: "ok",
      expiration: "ok",
      publicrepositories: "ok",
      key: "ok",
      certificate: "ok",
      x5c: "ok",
    },
    users: {
      enabled: "ok",
      prefix: "ok",
      selfregistration: "ok",
      admin: { username: "ok", password: "ok" },
    },
    verify: { enabled: "ok", interval: "ok", quarantine: "ok", concurrency: "ok" },
    ui: { enabled: "ok", prefix: "ok" },
    uploads: { peruser: "ok", perrepository: "ok", bytesperuser: "ok", bytesperrepository: "ok" },
    proxy: { upstreams: "any" },
  },
};

/** A finding of {@link checkKeys}: `refused` keys stop start-up, the rest are warnings. */
export interface KeyFinding {
  key: string;
  kind: "unknown" | "ignored" | "refused" | "not-a-map";
}

/** Walk `value` against `spec` and list the keys that are not simply supported. */
export function checkKeys(value: unknown, spec: KeySpec = SCHEMA, prefix = ""): KeyFinding[] {
  if (typeof spec === "string") {
    if (spec === "ignored" || spec === "refused") return [{ key: prefix, kind: spec }];
    return [];
  }
  if (value === null || value === undefined) return [];
  if (typeof value !== "object" || Array.isArray(value)) return prefix ? [{ key: prefix, kind: "not-a-map" }] : [];
  const findings: KeyFinding[] = [];
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const childSpec = spec[key];
    if (childSpec === undefined) findings.push({ key: path, kind: "unknown" });
    else findings.push(...checkKeys(child, childSpec, path));
  }
  return findings;
}
