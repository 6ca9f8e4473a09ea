/**
 * Every configuration key the CLI knows, and what it does with it.
 * `ok`: supported. `any`: supported, free-form below (e.g. header names).
 * `ignored`: a Distribution key registry-kit does not implement; start-up
 * warns and goes on. `refused`: a Distribution key whose silent omission
 * would weaken security or change behaviour (storage drivers
 * other than filesystem, inmemory, s3 and azure); start-up stops. Keys not listed
 * at all are warned as unknown, except at the top level and directly under
 * `storage` ({@link CLOSED_LEVELS}): there a misspelt section or driver name
 * would silently change where data goes or who may write, so it stops start-up.
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
    prefix: "ok",
    relativeurls: "ignored",
    debug: { addr: "ok", prometheus: { enabled: "ok", path: "ok" } },
    http2: { disabled: "ok" },
    h2c: { enabled: "ok" },
    // `letsencrypt` is refused with its own message in config-tls.ts.
    tls: { certificate: "ok", key: "ok", clientcas: "ok", minimumtls: "ok", ciphersuites: "ok", letsencrypt: "any" },
  },
  storage: {
    filesystem: { rootdirectory: "ok", maxthreads: "ignored", statoneventloop: "ok" },
    inmemory: "any",
    delete: { enabled: "ok" },
    cache: "ignored",
    maintenance: {
      uploadpurging: { enabled: "ok", age: "ok", interval: "ok", dryrun: "ok" },
      readonly: { enabled: "ok" },
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
    azure: {
      accountname: "ok",
      accountkey: "ok",
      container: "ok",
      realm: "ok",
      serviceurl: "ok",
      rootdirectory: "ok",
      maxretries: "ok",
      // Checked by value in config-storage-azure.ts: only shared_key.
      credentials: { type: "ok", clientid: "ok", tenantid: "ok", secret: "ok" },
      retrytrydelay: "ignored",
      retrydelay: "ignored",
      skipverify: "ignored",
      copy_status_poll_max_retry: "ignored",
      copy_status_poll_delay: "ignored",
    },
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
  proxy: { remoteurl: "ok", username: "ok", password: "ok", ttl: "ok", realms: "ok", exec: "refused" },
  validation: {
    enabled: "ok",
    disabled: "ok",
    manifests: { urls: { allow: "ok", deny: "ok" }, indexes: { platforms: "ok", platformlist: "ok" } },
  },
  // Checked by value in config.ts: schema1 enabled is refused, disabled is what registry-kit does anyway.
  compatibility: { schema1: { enabled: "ok", signingkeyfile: "ignored" } },
  registrykit: {
    keydirectory: "ok",
    trustproxy: "ok",
    hsts: "ok",
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
    // Checked by value in config-policy.ts: lists and maps of globs, rules with their own keys.
    policy: { immutabletags: "ok", quotas: "ok" },
    retention: "ok",
    gc: { enabled: "ok", interval: "ok", removeuntagged: "ok", graceperiod: "ok", dryrun: "ok" },
  },
};

/** The levels (dotted paths, `""` for the top) where an unknown key stops start-up instead of warning. */
export const CLOSED_LEVELS: ReadonlySet<string> = new Set(["", "storage"]);

/**
 * A finding of {@link checkKeys}: `refused` and `unknown-closed` keys stop
 * start-up, the rest are warnings. `nearest` is the closest known name at
 * that level, for a "did you mean" hint.
 */
export interface KeyFinding {
  key: string;
  kind: "unknown" | "unknown-closed" | "ignored" | "refused" | "not-a-map";
  nearest?: string;
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
    if (childSpec === undefined) {
      const near = nearestName(key, Object.keys(spec));
      findings.push({ key: path, kind: CLOSED_LEVELS.has(prefix) ? "unknown-closed" : "unknown", ...(near ? { nearest: near } : {}) });
    } else findings.push(...checkKeys(child, childSpec, path));
  }
  return findings;
}

/**
 * The known name closest to `key` by edit distance, when it is close enough
 * to be a plausible misspelling (at most a third of the longer name's length).
 */
export function nearestName(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = key.toLowerCase();
  for (const name of known) {
    const d = editDistance(lower, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(Math.max(key.length, best.length) / 3)) ? best : undefined;
}

/** Edit distance counting a swap of neighbours as one edit (optimal string alignment). Names are short. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!;
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
