/**
 * `storage.azure` in the all-in-one server's config.yml: Distribution's key
 * names (and Distribution 3's `serviceurl`), `REGISTRY_STORAGE_AZURE_*`
 * overrides, validation naming the key, and the driver the composition opens.
 */
import { describe, expect, it } from "vitest";
import { createAllInOne } from "../../src/server/all-in-one/all-in-one.js";
import { parseConfigText, resolveConfig, type AzureStorageConfig } from "../../src/server/config/config.js";
import { configError } from "./config-error.js";

const cwd = "/srv/app";
const KEY = "c2VjcmV0LWFjY291bnQta2V5LWV4YW1wbGU=";

function resolve(yaml: string, env: Record<string, string> = {}) {
  return resolveConfig({ document: parseConfigText(yaml), env, cwd });
}

function azure(yaml: string, env: Record<string, string> = {}): AzureStorageConfig {
  const { config } = resolve(yaml, env);
  expect(config.storage.driver).toBe("azure");
  return config.storage as AzureStorageConfig;
}

/** A `storage:` section with an azure driver of these extra lines. */
const storage = (lines: string) => `
version: 0.1
storage:
  azure:
    accountname: registrykit
    accountkey: "${KEY}"
    container: registry
${lines.split("\n").filter(Boolean).map((l) => `    ${l}`).join("\n")}
`;

describe("storage.azure with Distribution's key names", () => {
  it("reads every supported key", () => {
    expect(azure(storage("realm: core.chinacloudapi.cn\nrootdirectory: /prod/registry/\nmaxretries: 3\ncredentials: {type: shared_key}"))).toEqual({
      driver: "azure",
      accountName: "registrykit",
      accountKey: KEY,
      container: "registry",
      realm: "core.chinacloudapi.cn",
      rootDirectory: "prod/registry",
      maxRetries: 3,
    });
    expect(azure(storage("serviceurl: http://127.0.0.1:10000/devstoreaccount1/")).serviceURL).toBe("http://127.0.0.1:10000/devstoreaccount1");
  });

  it("takes REGISTRY_STORAGE_AZURE_* overrides, as Distribution", () => {
    const config = azure("version: 0.1\nstorage: {filesystem: {rootdirectory: /x}}\n", {
      REGISTRY_STORAGE: "azure",
      REGISTRY_STORAGE_AZURE_ACCOUNTNAME: "fromenv",
      REGISTRY_STORAGE_AZURE_ACCOUNTKEY: KEY,
      REGISTRY_STORAGE_AZURE_CONTAINER: "images",
    });
    expect(config).toMatchObject({ accountName: "fromenv", container: "images" });
  });

  it("warns about Distribution keys it does not use", () => {
    const { warnings } = resolve(storage("skipverify: true\nretrydelay: 5s\ncopy_status_poll_delay: 100ms"));
    expect(warnings).toEqual(expect.arrayContaining([
      expect.stringContaining("storage.azure.skipverify"),
      expect.stringContaining("storage.azure.retrydelay"),
      expect.stringContaining("storage.azure.copy_status_poll_delay"),
    ]));
  });

  it.each([
    ["version: 0.1\nstorage: {azure: {accountkey: k, container: registry}}", "storage.azure.accountname"],
    [storage("").replace(/ {4}accountkey.*\n/, ""), "storage.azure.accountkey"],
    [storage("").replace(/ {4}container.*\n/, ""), "storage.azure.container"],
    [storage("").replace("accountname: registrykit", "accountname: Not_Valid"), "storage.azure.accountname"],
    [storage("").replace("container: registry", "container: Bad_Name"), "storage.azure.container"],
    [storage("").replace(`accountkey: "${KEY}"`, "accountkey: not base64!"), "storage.azure.accountkey"],
    [storage("serviceurl: ftp://example.com"), "storage.azure.serviceurl"],
    [storage("serviceurl: https://acct.blob.core.windows.net/?sv=2021&sig=x"), "storage.azure.serviceurl"],
    [storage("rootdirectory: a/../b"), "storage.azure.rootdirectory"],
    [storage("credentials: {type: default_credentials}"), "storage.azure.credentials.type"],
  ])("refuses %j naming %s, and never shows the key", (yaml, key) => {
    const error = configError(() => resolve(yaml));
    expect(error.message).toContain(key);
    expect(error.message).not.toContain(KEY);
  });
});

describe("the composition opens the Azure driver", () => {
  it("from storage.azure, and names container and service (never the key) in the banner info", async () => {
    const { config } = resolve(storage("serviceurl: http://127.0.0.1:9/devstoreaccount1\nrootdirectory: prod"));
    const app = await createAllInOne({ ...config, http: { ...config.http, secret: "shared-secret" } });
    try {
      expect(app.info.storage).toBe("azure container registry at http://127.0.0.1:9/devstoreaccount1, prefix prod/; blob GETs redirect to presigned URLs");
      expect(app.info.storage).not.toContain(KEY);
    } finally {
      await app.close();
    }
  });

  it("defaults the service to the account in the realm", async () => {
    const { config } = resolve(storage(""));
    const app = await createAllInOne({ ...config, http: { ...config.http, secret: "shared-secret" } });
    try {
      expect(app.info.storage).toMatch(/^azure container registry at https:\/\/registrykit\.blob\.core\.windows\.net;/);
    } finally {
      await app.close();
    }
  });
});
