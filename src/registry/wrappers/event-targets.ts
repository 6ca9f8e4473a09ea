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
import { digestUrl } from "../responses.js";
import type { StoreCall } from "../stores/types.js";

/** What the event wrapper needs: the emitter and the API's root path (URLs of targets start with it). */
export interface EventSettings {
  emit: Emit;
  v2: string;
}

/** Emit `action` on `target` for the call's request, with its authenticated user as the actor. */
export function emitOn(settings: EventSettings, call: StoreCall, action: EventAction, target: EventTarget): Promise<void> {
  const { request } = call;
  const actor = (request && principalOf(request)?.subject) || undefined;
  return settings.emit(request, actor === undefined ? { action, target } : { action, target, actor });
}

/** The target of a manifest event. */
export function manifestTarget(settings: EventSettings, call: StoreCall, name: string, digest: string, mediaType: string, size: number, tag?: string, references?: EventDescriptor[]): EventTarget {
  const target: EventTarget = { mediaType, digest, size, length: size, repository: name };
  if (call.request) target.url = digestUrl(call.request, settings.v2, name, "manifests", digest);
  if (tag !== undefined) target.tag = tag;
  if (references !== undefined) target.references = references;
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
