/**
 * Write policies (docs/policies.md) as a store wrapper: before a manifest or
 * tag is stored, a blob upload or mount completes, or a tag, manifest or
 * repository is deleted, the policies are asked about the write as it would
 * look; a refusal is a 403 `DENIED`. The check and the write run while the
 * policies' `serializeOn` keys are held (in this process), so two racing
 * writes cannot both pass a check only one may pass. Assembled only when
 * policies are configured.
 *
 * @module
 */
import type { StorageDriver } from "../../storage/driver.js";
import type { Digest } from "../../oci/digest.js";
import { RegistryError } from "../../oci/errors.js";
import { mapLimited } from "../../util/map-limited.js";
import { CHECK_CONCURRENCY } from "../manifest-validation.js";
import { allPolicies, holding, policyDenied, type PendingWrite, type WritePolicy } from "../policy/write-policy.js";
import type { ManifestWrite, RegistryStores, StoreCall, StoreWrapper } from "../stores/types.js";

/**
 * The policy wrapper. `storage` is the registry's (checked) driver, which
 * {@link WritePolicy.check} receives (a quota recounts usage from it).
 */
// Over 80 lines: one closure over the policies; each store's methods describe their write in a few lines.
export function policyStores(policies: readonly WritePolicy[], storage: StorageDriver): StoreWrapper {
  const policy = allPolicies(policies);

  /** Ask about `describe()` and, when it passes, run `commit` holding the policy's keys. */
  async function checked<T>(describe: () => Promise<PendingWrite>, commit: () => Promise<T>): Promise<T> {
    const pending = await describe();
    return holding(policy.serializeOn?.(pending) ?? [], async () => {
      // Described again under the keys: what it replaces may have changed while waiting.
      const current = policy.serializeOn ? await describe() : pending;
      const refusal = await policy.check(current, storage);
      if (refusal) throw policyDenied(refusal);
      return commit();
    });
  }

  return (below) => {
    /** The tags of `name` pointing at `digest` now. */
    const tagsOf = async (name: string, digest: Digest, call: StoreCall): Promise<string[]> => {
      const tags: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await below.tags.details(name, after === undefined ? { limit: 1000 } : { after, limit: 1000 }, call);
        for (const t of page.tags) if (t.digest === digest.value) tags.push(t.tag);
        after = page.tags[page.tags.length - 1]?.tag;
        if (!page.truncated || after === undefined) return tags;
      }
    };
    /** The push as policies see it: what the tag points at now, and the stored size of each reference. */
    const describePush = async (name: string, write: ManifestWrite, call: StoreCall): Promise<PendingWrite> => {
      const { manifest, tag } = write;
      const replaces = tag === undefined ? undefined : (await below.tags.resolve(name, tag, call))?.digest.value;
      const blobs = new Map(manifest.blobs.map((d) => [d.digest.value, d.digest]));
      const children = new Map(manifest.manifests.filter((d) => !blobs.has(d.digest.value)).map((d) => [d.digest.value, d.digest]));
      const blobSizes = await mapLimited([...blobs.values()], CHECK_CONCURRENCY, async (d) => (await below.blobs.stat(name, d, call))?.size ?? 0);
      const childSizes = await mapLimited([...children.values()], CHECK_CONCURRENCY, async (d) => (await below.manifests.get(name, d, call))?.size ?? 0);
      const references = [...blobs.keys(), ...children.keys()].map((digest, i) => ({ digest, size: (i < blobSizes.length ? blobSizes[i] : childSizes[i - blobSizes.length]) ?? 0 }));
      return {
        action: "push", repository: name, tag, digest: write.digest.value, replaces, mediaType: manifest.mediaType, manifestSize: write.bytes.byteLength,
        references, referencedBytes: references.reduce((total, r) => total + r.size, 0), caller: call.caller,
      };
    };

    /** A refused push leaves no repository without a manifest in the catalog (its blobs were let in before). */
    const forgetIfRefused = async <T>(name: string, call: StoreCall, write: Promise<T>): Promise<T> => {
      try {
        return await write;
      } catch (error) {
        if (error instanceof RegistryError && error.code === "DENIED") await below.repositories.forgetIfEmpty(name, call);
        throw error;
      }
    };

    const stores: RegistryStores = {
      ...below,
      manifests: {
        ...below.manifests,
        put: (name, write, call) => forgetIfRefused(name, call, checked(() => describePush(name, write, call), () => below.manifests.put(name, write, call))),
        delete: (name, digest, call) =>
          checked(
            async () => ({ action: "deleteManifest", repository: name, digest: digest.value, tags: await tagsOf(name, digest, call), caller: call.caller }),
            () => below.manifests.delete(name, digest, call),
          ),
      },
      tags: {
        ...below.tags,
        delete: (name, tag, call) =>
          checked(
            async () => {
              const resolved = await below.tags.resolve(name, tag, call);
              if (!resolved) throw new RegistryError("MANIFEST_UNKNOWN", "manifest unknown to registry", 404, { tag: tag.slice(0, 300) });
              return { action: "deleteTag", repository: name, tag, digest: resolved.digest.value, caller: call.caller };
            },
            () => below.tags.delete(name, tag, call),
          ),
      },
      blobs: {
        ...below.blobs,
        async mount(name, from, digest, call, confirm) {
          // A link of bytes stored anywhere is the pull-through cache's (below this wrapper), never a push.
          if (from === undefined) return below.blobs.mount(name, from, digest, call, confirm);
          const source = await below.blobs.stat(from, digest, call);
          if (!source) return undefined;
          const write = async (): Promise<PendingWrite> => ({ action: "blob", repository: name, digest: digest.value, size: source.size, caller: call.caller });
          return forgetIfRefused(name, call, checked(write, () => below.blobs.mount(name, from, digest, call, confirm)));
        },
        // An immutable tag's image must keep its blobs.
        delete: (name, digest, call) =>
          checked(async () => ({ action: "deleteBlob", repository: name, digest: digest.value, caller: call.caller }), () => below.blobs.delete(name, digest, call)),
      },
      uploads: {
        ...below.uploads,
        async commit(name, session, digest, options, call) {
          try {
            return await checked(async () => ({ action: "blob", repository: name, digest: digest.value, size: options.size, caller: call.caller }), () => below.uploads.commit(name, session, digest, options, call));
          } catch (error) {
            // A refused blob will not be taken later either: its upload goes, and a repository it leaves without a manifest the catalog.
            if (error instanceof RegistryError && error.code === "DENIED") {
              await below.uploads.cancel(name, session, call);
              await below.repositories.forgetIfEmpty(name, call);
            }
            throw error;
          }
        },
      },
      repositories: {
        ...below.repositories,
        delete: (name, options, call) => below.repositories.delete(name, options.force || options.policies ? options : { ...options, policies }, call),
      },
    };
    return stores;
  };
}
