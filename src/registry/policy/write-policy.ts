/**
 * The pre-commit hook of the registry's writes: what a {@link WritePolicy}
 * sees before a manifest, a tag, a blob or a deletion is committed, and how
 * it refuses. The registry asks every configured policy; the first refusal
 * becomes a 403 `DENIED` whose message skopeo and podman print.
 *
 * @module
 */
import type { StorageDriver } from "../../storage/driver.js";
import { RegistryError } from "../../oci/errors.js";

/** A blob a manifest references, with the size it has in storage. */
export interface ReferencedBlob {
  /** Its digest. */
  digest: string;
  /** Its size in bytes (the stored object's; the descriptor's when it is not stored, e.g. a foreign layer). */
  size: number;
}

/** A manifest PUT about to be stored (and its tag, when pushed by tag, about to be pointed at it). */
export interface ManifestPush {
  /** What is written. */
  action: "push";
  /** The repository. */
  repository: string;
  /** The tag being written; `undefined` for a push by digest. */
  tag: string | undefined;
  /** The digest of the manifest being stored. */
  digest: string;
  /** The digest `tag` points at now and is about to be replaced; `undefined` when the tag is new (or no tag is written). */
  replaces: string | undefined;
  /** The manifest's media type. */
  mediaType: string;
  /** The manifest's own size in bytes. */
  manifestSize: number;
  /** The blobs and child manifests it references, each once. */
  references: readonly ReferencedBlob[];
  /** The sum of the sizes of {@link ManifestPush.references}. */
  referencedBytes: number;
  /** Who pushes (the registry's `callerOf`); `undefined` when anonymous. */
  caller: string | undefined;
}

/** A blob about to become visible in a repository: an upload completed, or a cross-repository mount. */
export interface BlobCommit {
  /** What is written. */
  action: "blob";
  /** The repository. */
  repository: string;
  /** The blob's digest. */
  digest: string;
  /** Its size in bytes. */
  size: number;
  /** Who pushes; `undefined` when anonymous. */
  caller: string | undefined;
}

/** `DELETE /v2/<name>/manifests/<tag>`: a tag about to be removed. */
export interface TagDelete {
  /** What is written. */
  action: "deleteTag";
  /** The repository. */
  repository: string;
  /** The tag. */
  tag: string;
  /** The digest it points at. */
  digest: string;
  /** Who deletes; `undefined` when anonymous. */
  caller: string | undefined;
}

/** `DELETE /v2/<name>/manifests/<digest>`: a manifest about to be removed with every tag pointing at it. */
export interface ManifestDelete {
  /** What is written. */
  action: "deleteManifest";
  /** The repository. */
  repository: string;
  /** The manifest's digest. */
  digest: string;
  /** The tags that point at it now and go with it. */
  tags: readonly string[];
  /** Who deletes; `undefined` when anonymous. */
  caller: string | undefined;
}

/** `DELETE /v2/<name>/blobs/<digest>`: a blob about to be unlinked from the repository. */
export interface BlobDelete {
  /** What is written. */
  action: "deleteBlob";
  /** The repository. */
  repository: string;
  /** The blob's digest. */
  digest: string;
  /** Who deletes; `undefined` when anonymous. */
  caller: string | undefined;
}

/** A whole repository about to be deleted (`deleteRepository` without `force`). */
export interface RepositoryDelete {
  /** What is written. */
  action: "deleteRepository";
  /** The repository. */
  repository: string;
  /** Its tags now. */
  tags: readonly string[];
  /** Who deletes; `undefined` when not known. */
  caller: string | undefined;
}

/** Every write a {@link WritePolicy} is asked about. */
export type PendingWrite = ManifestPush | BlobCommit | TagDelete | ManifestDelete | BlobDelete | RepositoryDelete;

/** A policy's refusal: the message clients print, and machine-readable detail for the error body. */
export interface PolicyRefusal {
  /** The message of the `DENIED` error (skopeo prints `denied: <message>`). */
  message: string;
  /** The `detail` of the error body. */
  detail?: Record<string, unknown>;
}

/**
 * A pre-commit hook. `check` is called before the write it is given takes
 * effect and resolves to `undefined` to let it through or to a
 * {@link PolicyRefusal}; a throw fails the request (a {@link RegistryError}
 * as itself, anything else as a 500). `serializeOn` names what the decision
 * read that a concurrent write could change: writes sharing any of the keys
 * are checked and committed one at a time (in this process), so two racing
 * pushes cannot both pass a check that only one may pass.
 */
export interface WritePolicy {
  /** Decide on one write. `storage` is the registry's (checked) driver. */
  check(write: PendingWrite, storage: StorageDriver): Promise<PolicyRefusal | undefined> | PolicyRefusal | undefined;
  /** Keys serializing writes whose decisions depend on each other; none by default. */
  serializeOn?(write: PendingWrite): readonly string[];
}

/** The 403 `DENIED` of a refusal. */
export function policyDenied(refusal: PolicyRefusal): RegistryError {
  return new RegistryError("DENIED", refusal.message, 403, refusal.detail ?? null);
}

/** Many policies as one: every key of each, and the first refusal in order. */
export function allPolicies(policies: readonly WritePolicy[]): WritePolicy {
  return {
    async check(write, storage) {
      for (const policy of policies) {
        const refusal = await policy.check(write, storage);
        if (refusal) return refusal;
      }
      return undefined;
    },
    serializeOn: (write) => policies.flatMap((p) => p.serializeOn?.(write) ?? []),
  };
}

const serial = new Map<string, Promise<void>>();

/**
 * Run `task` once every earlier task holding any of `keys` has settled; the
 * keys are taken in sorted order, so tasks with overlapping keys never wait on
 * each other in a cycle.
 */
export async function holding<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(keys)].sort();
  const previous = sorted.map((k) => serial.get(k) ?? Promise.resolve());
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  for (const key of sorted) serial.set(key, mine);
  try {
    await Promise.all(previous);
    return await task();
  } finally {
    release();
    for (const key of sorted) if (serial.get(key) === mine) serial.delete(key);
  }
}

/**
 * Ask `policy` about `write` and, when it agrees, run `commit` while holding
 * the policy's keys for it; a refusal throws the 403 `DENIED`.
 */
export async function checkedCommit<T>(policy: WritePolicy | undefined, storage: StorageDriver, write: () => Promise<PendingWrite>, commit: () => Promise<T>): Promise<T> {
  if (!policy) return commit();
  const pending = await write();
  return holding(policy.serializeOn?.(pending) ?? [], async () => {
    // The write is described again under the keys: what it replaces may have changed while waiting.
    const current = policy.serializeOn ? await write() : pending;
    const refusal = await policy.check(current, storage);
    if (refusal) throw policyDenied(refusal);
    return commit();
  });
}
