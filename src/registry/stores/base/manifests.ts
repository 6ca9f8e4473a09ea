/**
 * The base manifest store: a manifest's bytes are stored like a blob's
 * (`blobData`), its revision (metadata) per repository, and its `subject` in
 * the referrers index.
 *
 * @module
 */
import { tryParseDigest, type Digest } from "../../../oci/digest.js";
import { RegistryError } from "../../../oci/errors.js";
import type { ManifestStore, ReferrerDescriptor, StoredManifest } from "../types.js";
import { versionMemo, type BaseContext } from "./context.js";
import type { ManifestMeta } from "./layout.js";
import { forgetIfEmpty } from "./repository-delete.js";
import { eachKey, ensureRepository, readJson, readSmall, readText, writeJson, writeText } from "./storage-io.js";

/** Manifests up to this size are read with their revision (and may be held by the manifest cache). */
export const SMALL_MANIFEST = 256 * 1024;

/** Referrer entries read at once (one by one, 1,000 referrers took 2.1 s on fs; see bench/growth.ts). */
const READ_BATCH = 16;

/** The 404 `MANIFEST_UNKNOWN` of a digest. */
export function manifestUnknownDigest(digest: Digest): RegistryError {
  return new RegistryError("MANIFEST_UNKNOWN", "manifest unknown to registry", 404, { digest: digest.value });
}

/** The manifest store over `ctx`. */
// Over 80 lines: one closure over the context whose methods are the store's, each short.
export function baseManifests(ctx: BaseContext): ManifestStore {
  const { storage, layout } = ctx;
  const versionOf = versionMemo();

  /** The tags of `name` pointing at `digest` now, with their keys. */
  const tagsPointingAt = async (name: string, digest: Digest): Promise<{ tag: string; key: string }[]> => {
    const found: { tag: string; key: string }[] = [];
    for await (const key of eachKey(storage, layout.tagsPrefix(name))) {
      if ((await readText(storage, key))?.trim() !== digest.value) continue;
      const parsed = layout.parseKey(key);
      if (parsed.kind === "tagLink") found.push({ tag: parsed.tag, key });
    }
    return found;
  };

  return {
    async get(name, digest, _call, known) {
      const key = layout.manifestRevision(name, digest);
      const info = await storage.stat(key);
      if (!info) return undefined;
      const version = versionOf(info);
      if (known !== undefined && known.version === version) return known;
      const meta = await readJson<ManifestMeta>(storage, key);
      if (!meta) return undefined;
      const stored: { -readonly [K in keyof StoredManifest]: StoredManifest[K] } = { digest, mediaType: meta.mediaType, size: meta.size, version };
      if (meta.artifactType !== undefined) stored.artifactType = meta.artifactType;
      if (meta.subject !== undefined) stored.subject = meta.subject;
      if (meta.size <= SMALL_MANIFEST) {
        const bytes = await readSmall(storage, layout.blobData(digest), SMALL_MANIFEST);
        if (!bytes) return undefined;
        stored.bytes = bytes;
      } else stored.body = () => storage.read(layout.blobData(digest));
      return stored;
    },

    async put(name, { digest, bytes, manifest, tag, confirm }) {
      const revision = layout.manifestRevision(name, digest);
      // Bytes, then revision, then tag: each step is only visible once the one before it is done.
      const [, before] = await Promise.all([storage.write(layout.blobData(digest), bytes), confirm ? storage.stat(revision) : undefined]);
      const meta: ManifestMeta = { mediaType: manifest.mediaType, size: bytes.byteLength };
      if (manifest.artifactType !== undefined) meta.artifactType = manifest.artifactType;
      if (manifest.subject) meta.subject = manifest.subject.digest.value;
      await writeJson(storage, revision, meta);
      try {
        await confirm?.();
      } catch (error) {
        if (!before) await storage.delete(revision);
        throw error;
      }
      // GC may have set these very bytes aside (an orphan of the same digest) before the revision was stored; then
      // its last listing may not see the revision and deletes them: write them again (docs/gc.md).
      if (confirm && !(await storage.stat(layout.blobData(digest)))) await storage.write(layout.blobData(digest), bytes);
      if (manifest.subject) {
        const entry: ReferrerDescriptor = { mediaType: manifest.mediaType, digest: digest.value, size: bytes.byteLength };
        if (manifest.artifactType !== undefined) entry.artifactType = manifest.artifactType;
        if (manifest.annotations) entry.annotations = manifest.annotations;
        await writeJson(storage, layout.referrer(name, manifest.subject.digest, digest), entry);
      }
      if (tag !== undefined) await writeText(storage, layout.tagLink(name, tag), digest.value);
      return { created: await ensureRepository(storage, name) };
    },

    async delete(name, digest) {
      const meta = await readJson<ManifestMeta>(storage, layout.manifestRevision(name, digest));
      if (!meta) throw manifestUnknownDigest(digest);
      const untagged: string[] = [];
      for (const { tag, key } of await tagsPointingAt(name, digest)) {
        await storage.delete(key);
        untagged.push(tag);
      }
      const subject = meta.subject === undefined ? undefined : tryParseDigest(meta.subject);
      if (subject) await storage.delete(layout.referrer(name, subject, digest));
      await storage.delete(layout.manifestRevision(name, digest));
      return { untagged, emptied: await forgetIfEmpty(storage, name) };
    },

    async referrers(name, subject, { artifactType, limit }) {
      const manifests: ReferrerDescriptor[] = [];
      // The entries are small objects read a batch at a time, kept in key order.
      let batch: string[] = [];
      const take = async (): Promise<void> => {
        const entries = await Promise.all(batch.map((key) => readJson<ReferrerDescriptor>(storage, key)));
        batch = [];
        for (const entry of entries) {
          if (!entry || (artifactType !== undefined && entry.artifactType !== artifactType)) continue;
          if (manifests.length < limit) manifests.push(entry);
        }
      };
      for await (const key of eachKey(storage, layout.referrersPrefix(name, subject))) {
        batch.push(key);
        if (batch.length === READ_BATCH) await take();
        if (manifests.length >= limit) break;
      }
      if (batch.length > 0) await take();
      return manifests;
    },
  };
}
