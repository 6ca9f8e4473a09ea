/**
 * The registry's events, in Distribution's shape: the target of a manifest or
 * blob event (with its absolute URL by digest) and the actor of a request.
 *
 * @module
 */
import { principalOf } from "../auth/principal.js";
import { NO_EVENTS, RECORDED } from "../events/hook.js";
import type { EventAction, EventDescriptor, EventTarget } from "../events/model.js";
import type { RegistryContext } from "./context.js";
import type { CachedRevision } from "./manifest-cache.js";
import { parseManifest, type ParsedManifest } from "./manifest-document.js";
import { digestUrl } from "./responses.js";

/**
 * Emit `action` on `target()` for `request`, with its authenticated user as
 * the actor. The target is built only when someone listens: a manifest or blob
 * GET without `onEvent` builds nothing (the hot path).
 */
export function emitEvent(ctx: RegistryContext, request: Request, action: EventAction, target: () => EventTarget): Promise<void> {
  return listening(ctx) ? emitOn(ctx, request, action, target()) : RECORDED;
}

/**
 * {@link emitEvent} with its target made already: for the manifest GET, which
 * tests `listening(ctx)` first and so makes no function for the target.
 */
export function emitOn(ctx: RegistryContext, request: Request, action: EventAction, target: EventTarget): Promise<void> {
  const actor = principalOf(request)?.subject || undefined;
  return ctx.emit(request, actor === undefined ? { action, target } : { action, target, actor });
}

/** Whether the registry has an event hook (else a service may skip making an event's parts). */
export const listening = (ctx: RegistryContext): boolean => ctx.emit !== NO_EVENTS;

/**
 * Wait for `recorded` unless it is {@link RECORDED} (no listener, or a pull the
 * outbox holds in memory): then the caller answers in the same turn, without
 * the suspension an `await` costs on every manifest GET.
 */
export function whenRecorded(recorded: Promise<void>): Promise<void> | undefined {
  return recorded === RECORDED ? undefined : recorded;
}

/**
 * The target of a pull of a cached manifest revision: the one the last pull of
 * it had while tag and URL repeat (frozen, so that sharing it is safe), else a
 * new one kept for the next. An event sink then finds the line it wrote for
 * the last pull by identity, and the GET builds no object for its event. Its
 * `references` (as a push has them; Distribution sends them on pulls too with
 * `includereferences`) are read from the manifest once per cache entry.
 */
export function pullTarget(ctx: RegistryContext, request: Request, name: string, digest: string, cached: CachedRevision, tag: string | undefined): EventTarget {
  const url = digestUrl(request, ctx.v2, name, "manifests", digest);
  const kept = cached.pullTarget;
  // The cache entry is the revision of one repository (keyed by name and digest): only tag and URL can differ.
  if (kept !== undefined && kept.url === url && kept.tag === tag) return kept;
  const references = kept === undefined ? storedReferences(ctx, cached.bytes, cached.meta.mediaType) : kept.references;
  const target = Object.freeze(manifestTarget(ctx, request, name, digest, cached.meta.mediaType, cached.meta.size, tag, references));
  cached.pullTarget = target;
  return target;
}

/** The references of a push or pull event of `manifest`: its blobs (config, layers), then its child manifests. */
export function eventReferences(manifest: ParsedManifest): EventDescriptor[] {
  return [...manifest.blobs, ...manifest.manifests].map((d) => ({ mediaType: d.mediaType, digest: d.digest.value, size: d.size }));
}

/**
 * The references of the stored manifest `bytes`, frozen (pull targets are
 * shared); `undefined` if they no longer parse (the accepted media types
 * changed since the push): the pull is still reported, without them.
 */
export function storedReferences(ctx: RegistryContext, bytes: Uint8Array, mediaType: string): readonly EventDescriptor[] | undefined {
  try {
    return Object.freeze(eventReferences(parseManifest(bytes, mediaType, ctx.manifestMediaTypes)).map((d) => Object.freeze(d)));
  } catch {
    return undefined;
  }
}

/** The target of a manifest event. */
export function manifestTarget(ctx: RegistryContext, request: Request, name: string, digest: string, mediaType: string, size: number, tag?: string, references?: readonly EventDescriptor[]): EventTarget {
  const target: EventTarget = { mediaType, digest, size, length: size, repository: name, url: digestUrl(request, ctx.v2, name, "manifests", digest) };
  if (tag !== undefined) target.tag = tag;
  if (references !== undefined) target.references = references as EventDescriptor[];
  return target;
}

/** The target of a blob event (Distribution's blob media type is `application/octet-stream`). */
export function blobTarget(ctx: RegistryContext, request: Request, name: string, digest: string, size: number, fromRepository?: string): EventTarget {
  const target: EventTarget = { mediaType: "application/octet-stream", digest, size, length: size, repository: name, url: digestUrl(request, ctx.v2, name, "blobs", digest) };
  if (fromRepository !== undefined) target.fromRepository = fromRepository;
  return target;
}

/** Emit `repository.emptied` when `emptied` says the repository just left the catalog. */
export async function repositoryEmptied(ctx: RegistryContext, request: Request, name: string, emptied: boolean): Promise<void> {
  if (emptied) await emitEvent(ctx, request, "repository.emptied", () => ({ repository: name }));
}

/** Emit `repository.created` when `created` says the repository is new. */
export async function repositoryCreated(ctx: RegistryContext, request: Request, name: string, created: boolean): Promise<void> {
  if (created) await emitEvent(ctx, request, "repository.created", () => ({ repository: name }));
}
