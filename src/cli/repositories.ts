/**
 * `registry-kit repositories delete NAME [--force] [CONFIG]`: delete a
 * repository from the storage `registry-kit serve [CONFIG]` uses, and
 * `registry-kit repositories quotas [CONFIG]`: the usage of each configured
 * quota (docs/policies.md).
 *
 * @module
 */
import { deleteRepository, RegistryError } from "../registry/index.js";
import { openStorage } from "../server/all-in-one/all-in-one.js";
import { configuredPolicies } from "../server/all-in-one/all-in-one-policy.js";
import type { AllInOneConfig } from "../server/config/config.js";
import { formatBytes } from "../util/size.js";
import { loadCommandConfig } from "./command-support.js";
import type { CliIo } from "./io.js";

export const REPOSITORIES_USAGE = `Usage: registry-kit repositories delete NAME [--force] [CONFIG]
       registry-kit repositories quotas [CONFIG]

delete removes repository NAME from the storage that \`registry-kit serve [CONFIG]\`
uses: its tags, manifests, blob links and uploads; it leaves /v2/_catalog. The
blobs go with the next \`registry-kit gc\`. A repository holding an immutable tag
(registrykit.policy.immutabletags) is refused unless --force. Safe while the
server runs.

quotas prints the usage of each quota of registrykit.policy.quotas.`;

/** Run the `repositories` command; resolves to the exit code. */
export async function repositoriesCommand(args: string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  if (action === "--help" || action === "-h" || action === "help") {
    io.out(REPOSITORIES_USAGE);
    return 0;
  }
  const force = rest.includes("--force") && action === "delete";
  const positional = rest.filter((a) => a !== "--force" || action !== "delete");
  const name = action === "delete" ? positional.shift() : undefined;
  const wrong = (action !== "delete" && action !== "quotas") || (action === "delete" && name === undefined) || positional.length > 1 || positional.some((a) => a.startsWith("-"));
  if (wrong) {
    io.err(REPOSITORIES_USAGE);
    return 2;
  }
  let config: AllInOneConfig;
  try {
    config = await loadCommandConfig(positional[0], io);
    if (config.storage.driver === "inmemory") throw new Error("the configured storage is inmemory: its repositories live only inside the running server");
  } catch (error) {
    io.err(`registry-kit repositories: configuration error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const storage = openStorage(config);
  const policies = configuredPolicies(config, () => {});
  try {
    if (action === "quotas") {
      const usage = policies.quota ? await policies.quota.usage(storage) : [];
      if (usage.length === 0) io.out("no quotas configured (registrykit.policy.quotas)");
      for (const u of usage) {
        io.out(`${u.namespace}: ${u.used} of ${u.limit} bytes (${formatBytes(u.used)} of ${formatBytes(u.limit)}), ${u.blobs} blobs in ${u.repositories} repositories`);
      }
      return 0;
    }
    const report = await deleteRepository(storage, name!, { policies: policies.all, force });
    if (!report.found) {
      io.err(`registry-kit repositories delete: repository ${name} does not exist`);
      return 1;
    }
    io.out(`deleted repository ${name}: ${report.tags} tags, ${report.manifests} manifests, ${report.links} blob links, ${report.uploads} uploads; run registry-kit gc to free the blobs`);
    return 0;
  } catch (error) {
    if (error instanceof RegistryError && error.code === "DENIED") io.err(`registry-kit repositories delete: ${error.message}; use --force to delete it anyway`);
    else if (error instanceof RegistryError && error.code === "NAME_INVALID") io.err(`registry-kit repositories delete: invalid repository name ${JSON.stringify(name)}`);
    else io.err(`registry-kit repositories: failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await storage.close?.();
  }
}
