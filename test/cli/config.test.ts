import { pbkdf2 } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openStorage } from "../../src/server/all-in-one/open-storage.js";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfigText, resolveConfig, type AllInOneConfig } from "../../src/server/config/config.js";
import { applyEnvOverrides } from "../../src/server/config/config-env.js";
import { duration, parseAddr } from "../../src/server/config/config-values.js";
import { parse } from "yaml";
import { configError } from "./config-error.js";

const cwd = "/srv/app";

function resolve(yaml: string | undefined, env: Record<string, string> = {}) {
  return resolveConfig({ document: yaml === undefined ? undefined : parseConfigText(yaml), env, cwd });
}

function fails(yaml: string | undefined, env: Record<string, string> = {}): ConfigError {
  return configError(() => resolve(yaml, env));
}

const MINIMAL = `
version: 0.1
storage:
  inmemory: {}
`;

const FULL = `
version: 0.1
log:
  level: debug
  accesslog:
    disabled: true
http:
  addr: 0.0.0.0:5055
  host: https://registry.example.com/
  secret: s3cret
  draintimeout: 1m30s
  headers:
    X-Content-Type-Options: [nosniff]
    X-Multi: [a, b]
storage:
  filesystem:
    rootdirectory: /var/lib/registry
  delete:
    enabled: true
  redirect:
    disable: true
  maintenance:
    uploadpurging:
      enabled: true
      age: 2h
      interval: 30m
      dryrun: true
auth:
  token:
    realm: https://auth.example.com/token
    service: registry.example.com
    issuer: auth.example.com
    rootcertbundle: /etc/registry/root.crt
catalog:
  maxentries: 250
`;

describe("built-in defaults (serve without CONFIG)", () => {
  it("puts everything on 127.0.0.1:5000 with data under ./data", () => {
    const { config, warnings } = resolve(undefined);
    expect(warnings).toEqual([]);
    expect(config).toEqual<AllInOneConfig>({
      source: "defaults",
      http: { host: "127.0.0.1", port: 5000, headers: [["X-Content-Type-Options", "nosniff"]], drainTimeout: 10_000, trustProxy: false, http2: true, h2c: false },
      storage: { driver: "filesystem", rootDirectory: "/srv/app/data/registry" },
      deleteEnabled: false,
      redirect: true,
      readOnly: false,
      validation: { urls: { allow: [] }, indexes: "all" },
      catalogMaxEntries: 1000,
      log: { level: "info", accessLog: true },
      auth: { service: "registry-kit", issuer: "registry-kit" },
      tokenService: { path: "/service/token", expiration: 300, publicRepositories: [] },
      users: { prefix: "/api", selfRegistration: false, adminUsername: "admin" },
      ui: { prefix: "/ui" },
      keyDirectory: "/srv/app/data/keys",
      uploads: { idleSeconds: 604_800, purge: { intervalMs: 86_400_000, dryRun: false }, limits: {} },
    });
  });

  it("takes HOST, PORT, REGISTRY_KIT_DATA and the admin variables", () => {
    const { config } = resolve(undefined, {
      HOST: "0.0.0.0", PORT: "0", REGISTRY_KIT_DATA: "/tmp/rk", REGISTRY_KIT_ADMIN_USER: "root", REGISTRY_KIT_ADMIN_PASSWORD: "pw",
    });
    expect(config.http).toMatchObject({ host: "0.0.0.0", port: 0 });
    expect(config.storage).toEqual({ driver: "filesystem", rootDirectory: "/tmp/rk/registry" });
    expect(config.keyDirectory).toBe("/tmp/rk/keys");
    expect(config.users).toMatchObject({ adminUsername: "root", adminPassword: "pw" });
  });

  it("brackets an IPv6 HOST", () => {
    expect(resolve(undefined, { HOST: "::1", PORT: "5001" }).config.http).toMatchObject({ host: "::1", port: 5001 });
  });

  it("lets REGISTRY_* overrides win over HOST/PORT", () => {
    expect(resolve(undefined, { PORT: "6000", REGISTRY_HTTP_ADDR: "127.0.0.1:7000" }).config.http.port).toBe(7000);
  });
});

describe("a Distribution config.yml", () => {
  it("reads every supported key", () => {
    const { config, warnings } = resolve(FULL);
    expect(warnings).toEqual([]);
    expect(config).toEqual<AllInOneConfig>({
      source: "file",
      http: {
        host: "0.0.0.0", port: 5055, publicUrl: "https://registry.example.com", secret: "s3cret",
        headers: [["X-Content-Type-Options", "nosniff"], ["X-Multi", "a"], ["X-Multi", "b"]],
        drainTimeout: 90_000, trustProxy: false, http2: true, h2c: false,
      },
      storage: { driver: "filesystem", rootDirectory: "/var/lib/registry" },
      deleteEnabled: true,
      redirect: false,
      readOnly: false,
      validation: { urls: { allow: [] }, indexes: "all" },
      catalogMaxEntries: 250,
      log: { level: "debug", accessLog: false },
      auth: { realm: "https://auth.example.com/token", service: "registry.example.com", issuer: "auth.example.com", rootCertBundle: "/etc/registry/root.crt" },
      keyDirectory: "/srv/app/data/keys",
      keyDirectoryOptional: true,
      uploads: { idleSeconds: 7200, purge: { intervalMs: 1_800_000, dryRun: true }, limits: {} },
    });
  });

  it("marks the key directory optional only when it is the mere default of a file (issue 43)", () => {
    expect(resolve(MINIMAL).config.keyDirectoryOptional).toBe(true);
    expect(resolve(undefined).config.keyDirectoryOptional).toBeUndefined();
    expect(resolve(`${MINIMAL}registrykit: {keydirectory: /keys}`).config.keyDirectoryOptional).toBeUndefined();
    expect(resolve(MINIMAL, { REGISTRY_KIT_DATA: "/srv/rk" }).config.keyDirectoryOptional).toBeUndefined();
    expect(resolve(MINIMAL, { REGISTRY_REGISTRYKIT_KEYDIRECTORY: "/keys" }).config.keyDirectoryOptional).toBeUndefined();
  });

  it("reads storage.redirect.disable (default: redirect, as Distribution) and refuses a value that is not a boolean", () => {
    expect(resolve("version: 0.1\nstorage:\n  inmemory: {}\n").config.redirect).toBe(true);
    expect(resolve("version: 0.1\nstorage:\n  inmemory: {}\n  redirect:\n    disable: false\n").config.redirect).toBe(true);
    expect(() => resolve("version: 0.1\nstorage:\n  inmemory: {}\n  redirect:\n    disable: maybe\n")).toThrow(/storage\.redirect\.disable/);
  });

  it("reads the upload limits (registrykit.uploads) and turns the purge off with uploadpurging.enabled: false", () => {
    const { config, warnings } = resolve(`
version: 0.1
storage:
  inmemory:
  maintenance:
    uploadpurging: { enabled: false, age: 90m }
registrykit:
  uploads: { peruser: 8, perrepository: 20, bytesperuser: 2GiB, bytesperrepository: "500MB" }
`);
    expect(warnings.filter((w) => !w.startsWith("auth:"))).toEqual([]);
    expect(config.uploads).toEqual({
      idleSeconds: 5400,
      limits: { uploadsPerCaller: 8, uploadsPerRepository: 20, uploadBytesPerCaller: 2 * 1024 ** 3, uploadBytesPerRepository: 500_000_000 },
    });
  });

  it("refuses a malformed upload limit or purge age with the key's name", () => {
    const base = "version: 0.1\nstorage:\n  inmemory:\n";
    expect(() => resolve(`${base}registrykit:\n  uploads: { bytesperuser: lots }\n`)).toThrow(/registrykit\.uploads\.bytesperuser/);
    expect(() => resolve(`${base}registrykit:\n  uploads: { peruser: 0 }\n`)).toThrow(/registrykit\.uploads\.peruser/);
    expect(() => resolve(`${base}  maintenance:\n    uploadpurging: { age: 0s }\n`)).toThrow(/uploadpurging\.age/);
  });

  it("reads auth.token.jwks (instead of or beside rootcertbundle), signingalgorithms and autoredirect as Distribution 3", () => {
    const external = resolve(`${MINIMAL}auth:
  token:
    realm: https://auth.example.com/token
    service: registry.example.com
    issuer: auth.example.com
    jwks: keys/jwks.json
    signingalgorithms: [ES256, EdDSA]
    autoredirect: true
`);
    expect(external.warnings).toEqual([]);
    expect(external.config.auth).toEqual({
      realm: "https://auth.example.com/token", service: "registry.example.com", issuer: "auth.example.com",
      jwks: "/srv/app/keys/jwks.json", signingAlgorithms: ["ES256", "EdDSA"], autoRedirect: true, autoRedirectPath: "/auth/token",
    });
    // autoredirectpath is read only with autoredirect on, as in Distribution.
    const off = resolve(`${MINIMAL}auth: {token: {realm: "http://x/t", service: s, issuer: i, jwks: /j, rootcertbundle: /b, autoredirectpath: /elsewhere}}`);
    expect(off.config.auth).toEqual({ realm: "http://x/t", service: "s", issuer: "i", jwks: "/j", rootCertBundle: "/b" });
    // With our own token service the redirect path defaults to its path.
    const own = resolve(`${MINIMAL}auth: {token: {autoredirect: true}}\nregistrykit: {tokenservice: {path: /tok}}`);
    expect(own.config.auth).toMatchObject({ autoRedirect: true, autoRedirectPath: "/tok" });
  });

  it("treats auth.token as an external token service: no token service, no users API", () => {
    const { config } = resolve(FULL);
    expect(config.tokenService).toBeUndefined();
    expect(config.users).toBeUndefined();
  });

  it("accepts JSON as well", () => {
    const { config } = resolve(JSON.stringify({ version: "0.1", storage: { inmemory: null }, http: { addr: ":5000" } }));
    expect(config.storage).toEqual({ driver: "inmemory" });
    expect(config.http.host).toBe("0.0.0.0");
  });

  it("warns that a config without auth is open to everyone", () => {
    const { config, warnings } = resolve(MINIMAL);
    expect(config.auth).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining("no authentication")]);
  });

  it("defaults the filesystem root like Distribution and resolves relative paths against cwd", () => {
    expect(resolve("storage: {filesystem: {}}").config.storage).toEqual({ driver: "filesystem", rootDirectory: "/var/lib/registry" });
    expect(resolve("storage: {filesystem: {rootdirectory: ./reg}}").config.storage).toEqual({ driver: "filesystem", rootDirectory: "/srv/app/reg" });
  });

  it("reads storage.filesystem.statoneventloop as a boolean (registry-kit's own key) and names the key of a bad value", () => {
    expect(resolve("storage: {filesystem: {rootdirectory: /r, statoneventloop: false}}").config.storage).toEqual({ driver: "filesystem", rootDirectory: "/r", statOnEventLoop: false });
    expect(resolve("storage: {filesystem: {rootdirectory: /r, statoneventloop: \"true\"}}").config.storage).toEqual({ driver: "filesystem", rootDirectory: "/r", statOnEventLoop: true });
    expect(() => resolve("storage: {filesystem: {rootdirectory: /r, statoneventloop: sometimes}}")).toThrow(/storage\.filesystem\.statoneventloop/);
  });

  it("openStorage hands statoneventloop to the fs driver: with false a stat waits for a busy thread pool", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "rk-config-stat-"));
    try {
      const order = async (statOnEventLoop: boolean): Promise<string> => {
        const storage = openStorage({ storage: { driver: "filesystem", rootDirectory: path.join(root, String(statOnEventLoop)), statOnEventLoop } });
        await storage.write("o", new Uint8Array(1));
        const events: string[] = [];
        const jobs = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE ?? 4) }, () =>
          new Promise<void>((done) => pbkdf2("pw", "salt", 500_000, 64, "sha512", () => (events.push("pool job"), done()))));
        await Promise.all([...jobs, storage.stat("o").then(() => void events.push("stat"))]);
        return events[0]!;
      };
      expect(await order(true)).toBe("stat");
      expect(await order(false)).toBe("pool job");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("maps logrus level names", () => {
    expect(resolve(`${MINIMAL}log: {level: warning}`).config.log.level).toBe("warn");
    expect(resolve(`${MINIMAL}log: {level: trace}`).config.log.level).toBe("debug");
    expect(resolve(`${MINIMAL}log: {level: fatal}`).config.log.level).toBe("error");
  });
});

describe("the registrykit section", () => {
  it("serves registry-kit's own token service with every default", () => {
    const { config } = resolve(`${MINIMAL}registrykit: {tokenservice: {}}`);
    expect(config.auth).toEqual({ service: "registry-kit", issuer: "registry-kit" });
    expect(config.tokenService).toEqual({ path: "/service/token", expiration: 300, publicRepositories: [] });
    expect(config.users).toBeUndefined();
  });

  it("shares auth.token's realm, service, issuer and bundle with our token service", () => {
    const { config } = resolve(`${MINIMAL}
auth: {token: {realm: "https://r.example/auth", service: svc, issuer: iss}}
registrykit:
  keydirectory: /keys
  trustproxy: true
  tokenservice: {path: /auth, expiration: 15m, publicrepositories: ["library/*", public], key: k.pem, certificate: c.pem}
  users: {prefix: /admin, selfregistration: true, admin: {username: boss, password: pw}}
`);
    expect(config.auth).toEqual({ realm: "https://r.example/auth", service: "svc", issuer: "iss" });
    expect(config.tokenService).toEqual({
      path: "/auth", expiration: 900, publicRepositories: ["library/*", "public"], key: "/srv/app/k.pem", certificate: "/srv/app/c.pem",
    });
    expect(config.users).toEqual({ prefix: "/admin", selfRegistration: true, adminUsername: "boss", adminPassword: "pw" });
    expect(config.keyDirectory).toBe("/keys");
    expect(config.http.trustProxy).toBe(true);
  });

  it("can switch either service off", () => {
    const { config } = resolve(`${MINIMAL}registrykit: {tokenservice: {enabled: false}, users: {enabled: "false"}}`);
    expect(config.tokenService).toBeUndefined();
    expect(config.users).toBeUndefined();
  });
});

describe("registrykit.ui (the web page)", () => {
  const base = "storage: {inmemory: {}}\nregistrykit: {tokenservice: {}, users: {}";
  it("is on at /ui by default with users and the token service, moved by prefix, off by enabled: false", () => {
    expect(resolve(`${base}}`).config.ui).toEqual({ prefix: "/ui" });
    expect(resolve(`${base}, ui: {prefix: /console}}`).config.ui).toEqual({ prefix: "/console" });
    expect(resolve(`${base}, ui: {enabled: false}}`).config.ui).toBeUndefined();
  });
  it("is off without users; asking for it then is an error naming the key", () => {
    expect(resolve("storage: {inmemory: {}}\nregistrykit: {tokenservice: {}}").config.ui).toBeUndefined();
    expect(fails("storage: {inmemory: {}}\nregistrykit: {tokenservice: {}, ui: {enabled: true}}").message).toMatch(/registrykit\.ui.*needs registrykit\.users/);
  });
  it("refuses a prefix under /v2", () => {
    expect(fails(`${base}, ui: {prefix: /v2/ui}}`).message).toMatch(/registrykit\.ui\.prefix.*\/v2/);
  });
});

describe("environment overrides (REGISTRY_<SECTION>_<KEY>)", () => {
  it("override any key, typed by the key", () => {
    const { config } = resolve(FULL, {
      REGISTRY_HTTP_ADDR: "127.0.0.1:6000",
      REGISTRY_HTTP_SECRET: "12345",
      REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY: "/data",
      REGISTRY_STORAGE_DELETE_ENABLED: "false",
      REGISTRY_AUTH_TOKEN_REALM: "https://other.example/token",
      REGISTRY_AUTH_TOKEN_SERVICE: "svc2",
      REGISTRY_AUTH_TOKEN_ISSUER: "iss2",
      REGISTRY_AUTH_TOKEN_ROOTCERTBUNDLE: "/b.pem",
      REGISTRY_CATALOG_MAXENTRIES: "10",
      REGISTRY_LOG_LEVEL: "error",
      REGISTRY_LOG_ACCESSLOG_DISABLED: "false",
      REGISTRY_HTTP_DRAINTIMEOUT: "5s",
      REGISTRY_HTTP_HEADERS: '{"X-Frame-Options": ["DENY"]}',
    });
    expect(config.http).toMatchObject({ host: "127.0.0.1", port: 6000, secret: "12345", drainTimeout: 5000, headers: [["X-Frame-Options", "DENY"]] });
    expect(config.storage).toEqual({ driver: "filesystem", rootDirectory: "/data" });
    expect(config.deleteEnabled).toBe(false);
    expect(config.auth).toEqual({ realm: "https://other.example/token", service: "svc2", issuer: "iss2", rootCertBundle: "/b.pem" });
    expect(config.catalogMaxEntries).toBe(10);
    expect(config.log).toEqual({ level: "error", accessLog: true });
  });

  it("reach registry-kit's own section", () => {
    const { config } = resolve(undefined, {
      REGISTRY_REGISTRYKIT_TOKENSERVICE_EXPIRATION: "60",
      REGISTRY_REGISTRYKIT_USERS_PREFIX: "/manage",
      REGISTRY_REGISTRYKIT_USERS_SELFREGISTRATION: "true",
      REGISTRY_REGISTRYKIT_TOKENSERVICE_ENABLED: "false",
    });
    expect(config.tokenService).toBeUndefined();
    expect(config.users).toMatchObject({ selfRegistration: true, prefix: "/manage" });
  });

  it("split comma-separated lists", () => {
    const { config } = resolve(undefined, { REGISTRY_REGISTRYKIT_TOKENSERVICE_PUBLICREPOSITORIES: "library/*, public" });
    expect(config.tokenService?.publicRepositories).toEqual(["library/*", "public"]);
  });

  it("REGISTRY_STORAGE selects the driver and keeps the storage options", () => {
    const { config } = resolve(FULL, { REGISTRY_STORAGE: "inmemory" });
    expect(config.storage).toEqual({ driver: "inmemory" });
    expect(config.deleteEnabled).toBe(true);
  });

  it("do not treat REGISTRY_KIT_* as overrides", () => {
    const { warnings } = resolve(MINIMAL, { REGISTRY_KIT_DATA: "/x", REGISTRY_KIT_ADMIN_PASSWORD: "p" });
    expect(warnings.filter((w) => w.includes("unknown"))).toEqual([]);
  });

  it("name the variable when its value is invalid", () => {
    const error = fails(MINIMAL, { REGISTRY_HTTP_ADDR: "nope" });
    expect(error.key).toBe("http.addr (from REGISTRY_HTTP_ADDR)");
    expect(error.message).toMatch(/^http\.addr \(from REGISTRY_HTTP_ADDR\): expected "host:port"/);
  });

  it("ignore variables that name no key with Distribution's warning (issue 43)", () => {
    const { warnings } = resolve(MINIMAL, { REGISTRY_HTTP_FOO: "1" });
    expect(warnings).toContain("Ignoring unrecognized environment variable REGISTRY_HTTP_FOO");
    expect(warnings.filter((w) => w.includes("http.foo"))).toEqual([]);
  });

  it("start beside the variables Kubernetes sets for a Service named registry, and still take the known ones (issue 43)", () => {
    const kubernetes = {
      REGISTRY_PORT: "tcp://10.0.0.1:5000",
      REGISTRY_PORT_5000_TCP: "tcp://10.0.0.1:5000",
      REGISTRY_PORT_5000_TCP_ADDR: "10.0.0.1",
      REGISTRY_PORT_5000_TCP_PORT: "5000",
      REGISTRY_PORT_5000_TCP_PROTO: "tcp",
      REGISTRY_SERVICE_HOST: "10.0.0.1",
      REGISTRY_SERVICE_PORT: "5000",
      REGISTRY_SERVICE_PORT_HTTP: "5000",
    };
    const { config, warnings } = resolve(MINIMAL, { ...kubernetes, REGISTRY_HTTP_ADDR: "127.0.0.1:6001", REGISTRY_STORAGE_DELETE_ENABLED: "true" });
    expect(config.http.port).toBe(6001);
    expect(config.deleteEnabled).toBe(true);
    expect(warnings.filter((w) => w.startsWith("Ignoring"))).toEqual(
      Object.keys(kubernetes).sort().map((name) => `Ignoring unrecognized environment variable ${name}`),
    );
  });

  it("still refuse an unknown storage driver or a refused key named by a variable (Distribution's maps take any key)", () => {
    expect(fails(MINIMAL, { REGISTRY_STORAGE_SERVICE_HOST: "10.0.0.1" }).message).toMatch(/storage\.service.*not a known storage driver/);
    expect(fails(MINIMAL, { REGISTRY_STORAGE_GCS_BUCKET: "a" }).message).toMatch(/storage\.gcs.*not supported/);
  });

  it("are applied to a copy", () => {
    const doc = { http: { addr: ":1" } };
    applyEnvOverrides(doc, { REGISTRY_HTTP_ADDR: ":2" }, parse);
    expect(doc.http.addr).toBe(":1");
  });
});

describe("unknown and unsupported keys", () => {
  it("warns about unknown keys inside a known section and goes on, with the nearest known name", () => {
    const { warnings } = resolve(`${MINIMAL}http: {addr: ":5000", colour: blue, secrett: x}\nregistrykit: {users: {shoe: 1}}`);
    expect(warnings).toEqual(expect.arrayContaining([
      "http.colour: unknown key, ignored",
      'http.secrett: unknown key, ignored (did you mean "secret"?)',
      "registrykit.users.shoe: unknown key, ignored",
    ]));
  });

  it.each([
    ["storage: {filesytem: {rootdirectory: /tmp/x}}", 'storage.filesytem: not a known storage driver or storage option (did you mean "filesystem"?); refusing to start rather than ignore it'],
    ["storage: {inmemory: {}, maintainance: {readonly: {enabled: true}}}", 'storage.maintainance: not a known storage driver or storage option (did you mean "maintenance"?)'],
    ["storage: {inmemory: {}}\nauht: {htpasswd: {realm: r, path: /p}}", 'auht: not a known configuration section (did you mean "auth"?)'],
    ["storage: {inmemory: {}}\nfrobnicate: 1", "frobnicate: not a known configuration section; refusing"],
  ])("stops on an unknown top-level section or storage driver: %s", (text, message) => {
    expect(() => resolve(`version: 0.1\n${text}`)).toThrow(message);
  });

  it("reads storage.maintenance.readonly.enabled, default false, without a warning", () => {
    const on = resolve(`version: 0.1\nstorage: {inmemory: {}, maintenance: {readonly: {enabled: true}}}`);
    expect(on.config.readOnly).toBe(true);
    expect(on.warnings.join("\n")).not.toMatch(/maintenance/);
    expect(resolve(MINIMAL).config.readOnly).toBe(false);
    expect(() => resolve(`version: 0.1\nstorage: {inmemory: {}, maintenance: {readonly: {enabled: yes please}}}`)).toThrow(/storage\.maintenance\.readonly\.enabled/);
  });

  it("refuses compatibility.schema1.enabled: true and accepts false", () => {
    expect(() => resolve(`${MINIMAL}compatibility: {schema1: {enabled: true}}`)).toThrow(/compatibility\.schema1\.enabled: Docker schema1 manifests are not supported/);
    expect(resolve(`${MINIMAL}compatibility: {schema1: {enabled: false}}`).warnings.join("\n")).not.toMatch(/compatibility/);
  });

  it("warns about Distribution keys registry-kit ignores", () => {
    const { warnings } = resolve(`${MINIMAL}redis: {addr: "r:6379"}\nhttp: {addr: ":5000", relativeurls: true, prefix: /reg}\nlog: {formatter: json}`);
    expect(warnings).toEqual(expect.arrayContaining([
      "redis: not supported by registry-kit, ignored",
      "http.relativeurls: not supported by registry-kit, ignored",
      "log.formatter: not supported by registry-kit, ignored",
    ]));
    expect(warnings.join("\n")).not.toMatch(/http\.prefix/);
  });

  it.each([
    ["http: {tls: {letsencrypt: {cachefile: /c, email: a@b.c}}}", "http.tls.letsencrypt"],
    ["auth: {silly: {realm: r, service: s}}", "auth.silly"],
  ])("refuses to start with %s (security would silently change)", (extra, key) => {
    expect(fails(`${MINIMAL}${extra}`).key).toBe(key);
  });
});

describe("auth.htpasswd", () => {
  it("reads realm and path (made absolute), and does not warn about missing auth", () => {
    const { config, warnings } = resolve(`${MINIMAL}auth: {htpasswd: {realm: basic-realm, path: etc/htpasswd}}`);
    expect(config.htpasswd).toEqual({ realm: "basic-realm", path: "/srv/app/etc/htpasswd" });
    expect(config.auth).toBeUndefined();
    expect(warnings.join("\n")).not.toMatch(/no authentication/);
  });

  it.each([
    ["auth: {htpasswd: {path: /p}}", "auth.htpasswd.realm"],
    ["auth: {htpasswd: {realm: r}}", "auth.htpasswd.path"],
  ])("requires both keys (%s)", (extra, key) => {
    expect(fails(`${MINIMAL}${extra}`).key).toBe(key);
  });

  it("is refused together with auth.token or registrykit.tokenservice (one access controller)", () => {
    const both = fails(`${MINIMAL}auth: {htpasswd: {realm: r, path: /p}, token: {realm: "http://t/", service: s, issuer: i, rootcertbundle: /b}}`);
    expect(both.key).toBe("auth.htpasswd");
    expect(both.message).toMatch(/auth\.token/);
    const own = fails(`${MINIMAL}auth: {htpasswd: {realm: r, path: /p}}\nregistrykit: {tokenservice: {}}`);
    expect(own.key).toBe("auth.htpasswd");
    expect(own.message).toMatch(/registrykit\.tokenservice/);
  });
});

describe("invalid values stop start-up with the key named", () => {
  it.each([
    ["version: 0.2\nstorage: {inmemory: {}}", "version"],
    [`${MINIMAL}http: {addr: "5000"}`, "http.addr"],
    [`${MINIMAL}http: {addr: "h:70000"}`, "http.addr"],
    [`${MINIMAL}http: {net: unix}`, "http.net"],
    [`${MINIMAL}http: {secret: ""}`, "http.secret"],
    [`${MINIMAL}http: {host: "registry.example.com"}`, "http.host"],
    [`${MINIMAL}http: {draintimeout: soon}`, "http.draintimeout"],
    [`${MINIMAL}http: {headers: [a]}`, "http.headers"],
    [`${MINIMAL}http: {headers: {"Bad Name": [x]}}`, "http.headers.Bad Name"],
    [`${MINIMAL}http: {headers: {X-A: [{a: 1}]}}`, "http.headers.X-A"],
    ["storage: {}", "storage"],
    ["version: 0.1", "storage"],
    ["storage: {inmemory: {}, filesystem: {rootdirectory: /x}}", "storage"],
    ["storage: {s3: {bucket: b}}", "storage.s3.region"],
    ["storage: {azure: {accountname: a}}", "storage.azure.accountname"],
    ["storage: {gcs: {bucket: a}}", "storage.gcs"],
    ["storage: {filesystem: {rootdirectory: 7}, delete: {enabled: yes}}", "storage.delete.enabled"],
    [`${MINIMAL}catalog: {maxentries: 0}`, "catalog.maxentries"],
    [`${MINIMAL}catalog: {maxentries: many}`, "catalog.maxentries"],
    [`${MINIMAL}log: {level: loud}`, "log.level"],
    [`${MINIMAL}auth: {token: {realm: "ftp://x", service: s, issuer: i, rootcertbundle: /b}}`, "auth.token.realm"],
    [`${MINIMAL}auth: {token: {realm: "http://x/t", service: s, issuer: i}}`, "auth.token.rootcertbundle"],
    [`${MINIMAL}auth: {token: {realm: "http://x/t", issuer: i, rootcertbundle: /b}}`, "auth.token.service"],
    [`${MINIMAL}auth: {token: {service: s, issuer: i, rootcertbundle: /b}}`, "auth.token.realm"],
    [`${MINIMAL}auth: {token: {realm: "http://x/t", service: s, issuer: "", rootcertbundle: /b}}`, "auth.token.issuer"],
    [`${MINIMAL}auth: {token: nope}`, "auth.token"],
    [`${MINIMAL}auth: {token: {realm: "http://x/t", service: s, issuer: i, jwks: /j, signingalgorithms: [RS256, XS1]}}`, "auth.token.signingalgorithms"],
    [`${MINIMAL}auth: {token: {realm: "http://x/t", service: s, issuer: i, jwks: /j, signingalgorithms: [HS256]}}`, "auth.token.signingalgorithms"],
    [`${MINIMAL}auth: {token: {realm: "http://x/t", service: s, issuer: i, jwks: /j, autoredirect: "yes please"}}`, "auth.token.autoredirect"],
    [`${MINIMAL}auth: {token: {realm: "http://x/t", service: s, issuer: i, jwks: /j, autoredirect: true, autoredirectpath: "auth"}}`, "auth.token.autoredirectpath"],
    [`${MINIMAL}registrykit: {tokenservice: {path: "no-slash"}}`, "registrykit.tokenservice.path"],
    [`${MINIMAL}registrykit: {tokenservice: {path: "/v2/token"}}`, "registrykit.tokenservice.path"],
    [`${MINIMAL}registrykit: {tokenservice: {expiration: "0s"}}`, "registrykit.tokenservice.expiration"],
    [`${MINIMAL}registrykit: {tokenservice: {key: k.pem}}`, "registrykit.tokenservice.certificate"],
    [`${MINIMAL}registrykit: {tokenservice: {publicrepositories: [""]}}`, "registrykit.tokenservice.publicrepositories[0]"],
    [`${MINIMAL}registrykit: {tokenservice: {path: /api/users/token}, users: {}}`, "registrykit.tokenservice.path"],
    [`${MINIMAL}registrykit: {users: {prefix: /v2}}`, "registrykit.users.prefix"],
    [`${MINIMAL}registrykit: {users: {admin: {username: ""}}}`, "registrykit.users.admin.username"],
    [`${MINIMAL}registrykit: {users: {enabled: 1}}`, "registrykit.users.enabled"],
  ])("%s → %s", (yaml, key) => {
    expect(fails(yaml).key).toBe(key);
  });

  it("reports YAML syntax errors", () => {
    expect(() => parseConfigText("http: [unclosed", "config.yml")).toThrow(/^config\.yml: not valid YAML or JSON/);
    expect(() => parseConfigText("- a\n- b", "config.yml")).toThrow(ConfigError);
  });

  it("treats an empty file as an empty map", () => {
    expect(parseConfigText("")).toEqual({});
  });
});

describe("value parsers", () => {
  it.each([
    [":5000", { host: "0.0.0.0", port: 5000 }],
    ["localhost:80", { host: "localhost", port: 80 }],
    ["[::1]:5000", { host: "::1", port: 5000 }],
    ["0.0.0.0:0", { host: "0.0.0.0", port: 0 }],
  ])("http.addr %j", (value, expected) => {
    expect(parseAddr("http.addr", value)).toEqual(expected);
  });

  it.each([
    ["10s", 10_000], ["1m30s", 90_000], ["250ms", 250], ["1h", 3_600_000], ["1.5s", 1500], [30, 30_000], ["45", 45_000], ["1500µs", 1.5], ["2000us", 2],
  ])("duration %j", (value, ms) => {
    expect(duration("k", value)).toBe(ms);
  });
});
