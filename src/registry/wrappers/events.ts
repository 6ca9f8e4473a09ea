/**
 * Event emission as a store wrapper: every successful write below it emits
 * Distribution's event (push, mount, delete, upload started and cancelled,
 * repository created and emptied), and every manifest or blob GET a pull.
 * Assembled only when the registry has an `onEvent` hook, so a registry
 * without one pays nothing on its hot paths.
 *
 * The pull of a manifest revision the stores below keep in memory (the
 * manifest cache answers with the same object while it is unchanged) reuses
 * the frozen target of the last pull while tag and URL repeat: an event sink
 * then finds the line it wrote for the last pull by identity, and the GET
 * builds no object for its event. A pull the outbox holds in memory resolves
 * to {@link RECORDED}, and then the GET answers in the same turn.
 *
 * @module
 */
import { RECORDED } from "../../events/hook.js";
import type { EventTarget } from "../../events/model.js";
import type { BlobStore, ManifestStore, StoreCall, StoreWrapper, StoredManifest, TagStore, UploadSession, UploadStore } from "../stores/types.js";
import { digestUrl } from "../responses.js";
import { RegistryError } from "../../oci/errors.js";
import { readAll } from "../../util/streams.js";
import { blobTarget, emitOn, eventReferences, manifestTarget, storedReferences, type EventSettings } from "./event-targets.js";

/** Whether the call is an HTTP GET (a pull; a HEAD or a check during a push is none). */
const isGet = (call: StoreCall): boolean => call.request !== undefined && call.request.method.toUpperCase() === "GET";

/** Wait for `recorded` unless it is {@link RECORDED}: then the caller goes on in the same turn. */
async function recordedThen<T>(recorded: Promise<void>, value: T): Promise<T> {
  if (recorded !== RECORDED) await recorded;
  return value;
}

type Held = StoredManifest & { bytes: Uint8Array };

/** What the event wrapper of one registry keeps between calls. */
interface EventState {
  settings: EventSettings;
  /** The tag a request resolved, for the target of its manifest pull. */
  resolvedTags: WeakMap<Request, string>;
  /** The frozen target of the last pull of a kept revision object. */
  frozen: WeakMap<StoredManifest, Readonly<EventTarget>>;
  /** Sessions of single-POST uploads: never announced, so never cancelled either. */
  single: WeakSet<UploadSession>;
}

/** The event wrapper. */
export function eventStores(settings: EventSettings): StoreWrapper {
  return (below) => {
    const state: EventState = { settings, resolvedTags: new WeakMap(), frozen: new WeakMap(), single: new WeakSet() };
    return {
      manifests: manifestEvents(below.manifests, state),
      tags: tagEvents(below.tags, state),
      blobs: blobEvents(below.blobs, state),
      uploads: uploadEvents(below.uploads, state),
      repositories: below.repositories,
    };
  };
}

/**
 * The target of a pull of a revision the stores below keep (it has its
 * bytes): the one the last pull of the same object had while tag and URL
 * repeat, else a new one kept for the next. Its `references` (as a push has
 * them; Distribution sends them on pulls too with `includereferences`) are
 * read from the manifest once per object.
 */
function pullTarget(state: EventState, call: StoreCall, name: string, manifest: Held, tag: string | undefined): EventTarget {
  const { settings, frozen } = state;
  const kept = frozen.get(manifest);
  // The object is the revision of one repository (the cache keys it by name and digest): only tag and URL can differ.
  if (kept !== undefined && kept.tag === tag && kept.url === digestUrl(call.request!, settings.v2, name, "manifests", manifest.digest.value)) return kept;
  const references = kept === undefined ? storedReferences(settings, manifest.bytes, manifest.mediaType) : kept.references;
  const made = Object.freeze(manifestTarget(settings, call, name, manifest.digest.value, manifest.mediaType, manifest.size, tag, references));
  frozen.set(manifest, made);
  return made;
}

/**
 * A revision too large to be kept: its bytes are read whole for the event's
 * `references` (a manifest has a size limit) and handed up with it, so the
 * GET answers from them instead of reading it a second time.
 */
async function withBytes(settings: EventSettings, manifest: StoredManifest): Promise<Held> {
  if (manifest.bytes) return manifest as Held;
  const body = await manifest.body?.();
  const bytes = body && (await readAll(body, Math.max(manifest.size, settings.manifestBytes), () => new Error(`manifest ${manifest.digest.value} is larger than it says`)));
  if (!bytes) throw new RegistryError("MANIFEST_UNKNOWN", "manifest unknown to registry", 404, { digest: manifest.digest.value });
  const { body: _read, ...rest } = manifest;
  return { ...rest, bytes };
}

function manifestEvents(below: ManifestStore, state: EventState): ManifestStore {
  const { settings } = state;
  return {
    ...below,
    async get(name, digest, call, known) {
      const manifest = await below.get(name, digest, call, known);
      if (!manifest || !isGet(call)) return manifest;
      const tag = state.resolvedTags.get(call.request!);
      const held = manifest.bytes ? (manifest as Held) : await withBytes(settings, manifest);
      return recordedThen(emitOn(settings, call, "pull", pullTarget(state, call, name, held, tag)), held);
    },
    async put(name, write, call) {
      const result = await below.put(name, write, call);
      if (result.created) await emitOn(settings, call, "repository.created", { repository: name });
      const { manifest, digest, bytes, tag } = write;
      await emitOn(settings, call, "push", manifestTarget(settings, call, name, digest.value, manifest.mediaType, bytes.byteLength, tag, eventReferences(manifest)));
      return result;
    },
    async delete(name, digest, call) {
      const result = await below.delete(name, digest, call);
      await emitOn(settings, call, "delete", { digest: digest.value, repository: name });
      // Then one per tag that pointed at it, as Distribution does.
      for (const tag of result.untagged) await emitOn(settings, call, "delete", { repository: name, tag });
      if (result.emptied) await emitOn(settings, call, "repository.emptied", { repository: name });
      return result;
    },
  };
}

function tagEvents(below: TagStore, state: EventState): TagStore {
  return {
    ...below,
    async resolve(name, tag, call, known) {
      const resolved = await below.resolve(name, tag, call, known);
      if (resolved && call.request) state.resolvedTags.set(call.request, tag);
      return resolved;
    },
    async delete(name, tag, call) {
      const digest = await below.delete(name, tag, call);
      await emitOn(state.settings, call, "delete", { repository: name, tag });
      return digest;
    },
  };
}

function blobEvents(below: BlobStore, { settings }: EventState): BlobStore {
  return {
    ...below,
    async read(name, digest, options, call) {
      const content = await below.read(name, digest, options, call);
      if (!content || !isGet(call)) return content;
      // A redirect is a pull all the same (as Distribution counts it); its size is not known (no stat on that path).
      const size = content.kind === "bytes" ? Math.max(0, content.size) : undefined;
      await emitOn(settings, call, "pull", blobTarget(settings, call, name, digest.value, size));
      return content;
    },
    async delete(name, digest, call) {
      await below.delete(name, digest, call);
      await emitOn(settings, call, "delete", { digest: digest.value, repository: name });
    },
    async mount(name, from, digest, call, confirm) {
      const mounted = await below.mount(name, from, digest, call, confirm);
      if (!mounted) return mounted;
      if (mounted.created) await emitOn(settings, call, "repository.created", { repository: name });
      await emitOn(settings, call, "mount", blobTarget(settings, call, name, digest.value, mounted.size, from));
      return mounted;
    },
  };
}

function uploadEvents(below: UploadStore, { settings, single }: EventState): UploadStore {
  return {
    ...below,
    async start(name, call, options) {
      const session = await below.start(name, call, options);
      if (options?.single) single.add(session);
      else await emitOn(settings, call, "upload.started", { repository: name, uploadId: session.uuid });
      return session;
    },
    async commit(name, session, digest, options, call) {
      const blob = await below.commit(name, session, digest, options, call);
      if (blob.created) await emitOn(settings, call, "repository.created", { repository: name });
      await emitOn(settings, call, "push", blobTarget(settings, call, name, digest.value, blob.size));
      return blob;
    },
    async cancel(name, session, call) {
      await below.cancel(name, session, call);
      if (!single.has(session)) await emitOn(settings, call, "upload.cancelled", { repository: name, uploadId: session.uuid });
    },
  };
}
