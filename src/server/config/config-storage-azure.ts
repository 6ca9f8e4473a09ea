/**
 * `storage.azure`, with Distribution's key names: `accountname`, `accountkey`,
 * `container`, `realm`, `rootdirectory`; Distribution 3's `serviceurl` (an
 * emulator such as Azurite, or a private endpoint) and `credentials.type:
 * shared_key`. Other credential types (managed identities, client secrets) are
 * refused rather than silently replaced.
 *
 * @module
 */
import type { ConfigReader } from "./config-reader.js";
import type { AzureStorageConfig } from "./config-types.js";
import { ConfigError, positiveInt, str } from "./config-values.js";

/** A key of the `storage.azure` section. */
const azureKey = (key: string): string => `storage.azure.${key}`;

/** Read `storage.azure`. */
export function resolveAzure(reader: ConfigReader): AzureStorageConfig {
  const { opt, named } = reader;
  const credentialsType = opt(azureKey("credentials.type"), str);
  if (credentialsType !== undefined && credentialsType !== "shared_key") {
    throw new ConfigError(named(azureKey("credentials.type")),
      `only shared_key is supported by registry-kit (accountname and accountkey), got ${JSON.stringify(credentialsType)}`);
  }
  const accountName = required(reader, "accountname");
  if (!/^[a-z0-9]{3,24}$/.test(accountName)) throw new ConfigError(named(azureKey("accountname")), `not a valid storage account name: ${JSON.stringify(accountName)}`);
  const accountKey = required(reader, "accountkey");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(accountKey)) throw new ConfigError(named(azureKey("accountkey")), "expected the base64 account key");
  const container = required(reader, "container");
  if (!/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/.test(container)) {
    throw new ConfigError(named(azureKey("container")), `not a valid container name: ${JSON.stringify(container)}`);
  }
  const realm = opt(azureKey("realm"), str);
  if (realm !== undefined && !/^[A-Za-z0-9.-]+$/.test(realm)) throw new ConfigError(named(azureKey("realm")), `expected a domain such as core.windows.net, got ${JSON.stringify(realm)}`);
  const serviceURL = serviceUrl(reader);
  const rootDirectory = rootDir(reader);
  const maxRetries = opt(azureKey("maxretries"), positiveInt);
  return {
    driver: "azure",
    accountName,
    accountKey,
    container,
    ...(realm !== undefined ? { realm } : {}),
    ...(serviceURL !== undefined ? { serviceURL } : {}),
    ...(rootDirectory !== undefined ? { rootDirectory } : {}),
    ...(maxRetries !== undefined ? { maxRetries } : {}),
  };
}

function required({ opt, named }: ConfigReader, key: string): string {
  const value = opt(azureKey(key), str);
  if (value === undefined || value === "") throw new ConfigError(named(azureKey(key)), "is required");
  return value;
}

/** `serviceurl`: an http(s) URL with a path at most (Azurite's `/devstoreaccount1`); written out, plain http is the operator's choice. */
function serviceUrl({ opt, named }: ConfigReader): string | undefined {
  const text = opt(azureKey("serviceurl"), str);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(named(azureKey("serviceurl")), `expected a URL such as "http://127.0.0.1:10000/devstoreaccount1", got ${JSON.stringify(text)}`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw new ConfigError(named(azureKey("serviceurl")), "expected an http or https URL without query or credentials (the account key signs every request)");
  }
  return url.href.replace(/\/+$/, "");
}

/** `rootdirectory` as a blob name prefix without leading or trailing slashes; `undefined` for none. */
function rootDir({ opt, named }: ConfigReader): string | undefined {
  const text = opt(azureKey("rootdirectory"), str);
  if (text === undefined) return undefined;
  const trimmed = text.replace(/^\/+|\/+$/g, "");
  if (trimmed !== "" && (!/^[A-Za-z0-9._@:+=/-]+$/.test(trimmed) || trimmed.split("/").some((s) => s === "" || s === "." || s === ".."))) {
    throw new ConfigError(named(azureKey("rootdirectory")), `expected a name prefix such as "registry" or "/prod/registry", got ${JSON.stringify(text)}`);
  }
  return trimmed !== "" ? trimmed : undefined;
}
