/**
 * The parts of the registry's events, in Distribution's shape: the target of
 * a manifest or blob event (with its absolute URL by digest) and the actor of
 * a request.
 *
 * @module
 */
import { principalOf } from "../../auth/principal.js";
import type { Emit } from "../../events/hook.js";
import type { EventAction, EventDescriptor, EventTarget } from "../../events/model.js";
import { parseManifest, type ParsedManifest } from "../manifest-document.js";
import { digestUrl } from "../responses.js";
import type { StoreCall } from "../stores/types.js";

/** What the event wrapper needs: the emitter, the API's root path (URLs of targets start with it), and how manifests are read. */
export interface EventSettings {
  emit: Emit;
  v2: string;
  /** The accepted manifest media types (a pulled manifest is parsed for its references). */
  manifestMediaTypes: ReadonlySet<string>;
  /** The manifest size limit (a manifest too large for the cache is read whole once for its references). */
  manifestBytes: number;
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
export function storedReferences(settings: EventSettings, bytes: Uint8Array, mediaType: string): readonly EventDescriptor[] | undefined {
  try {
    return Object.freeze(eventReferences(parseManifest(bytes, mediaType, settings.manifestMediaTypes)).map((d) => Object.freeze(d)));
  } catch {
    return undefined;
  }
}

/** Emit `action` on `target` for the call's request, with its authenticated user as the actor. */
export function emitOn(settings: EventSettings, call: StoreCall, action: EventAction, target: EventTarget): Promise<void> {
  const { request } = call;
  const actor = (request && principalOf(request)?.subject) || undefined;
  return settings.emit(request, actor === undefined ? { action, target } : { action, target, actor });
}

/** The target of a manifest event. */
export function manifestTarget(settings: EventSettings, call: StoreCall, name: string, digest: string, mediaType: string, size: number, tag?: string, references?: readonly EventDescriptor[]): EventTarget {
  const target: EventTarget = { mediaType, digest, size, length: size, repository: name };
  if (call.request) target.url = digestUrl(call.request, settings.v2, name, "manifests", digest);
  if (tag !== undefined) target.tag = tag;
  if (references !== undefined) target.references = references as EventDescriptor[];
  return target;
}

/** The target of a blob event (Distribution's blob media type is `application/octet-stream`); no size when it is not known. */
export function blobTarget(settings: EventSettings, call: StoreCall, name: string, digest: string, size: number | undefined, fromRepository?: string): EventTarget {
  const target: EventTarget = size === undefined
    ? { mediaType: "application/octet-stream", digest, repository: name }
    : { mediaType: "application/octet-stream", digest, size, length: size, repository: name };
  if (call.request) target.url = digestUrl(call.request, settings.v2, name, "blobs", digest);
  if (fromRepository !== undefined) target.fromRepository = fromRepository;
  return target;
}
