/**
 * An event's outbox line: its JSON as UTF-8 bytes, exactly the bytes of
 * `JSON.stringify(event)` (minus `target.references` unless asked for), built
 * from templates.
 *
 * Pulls, the bulk of the traffic, repeat everything but their ids and
 * timestamp: the same target (a manifest pulled by the same tag through the
 * same host), actor and source, and a client's requests the same method,
 * user agent, address and host. So the bytes from `"action"` to the end of
 * `"source"`, and those of the request after its id, are kept for the next
 * event that has equal fields: an event is these two templates, its ids and
 * its time (a record of PendingEvents, pending-events.ts), and its line is
 * copying the templates and writing three short strings, not a serialization.
 *
 * @module
 */
import type { EventAction, EventSource, EventTarget, RegistryEvent } from "./model.js";
import type { PendingEvents } from "./pending-events.js";
import type { RequestParts } from "./request.js";

const encoder = new TextEncoder();
const bytesOf = (text: string): Uint8Array => encoder.encode(text);

/** Templates kept (a registry's pulls repeat a few images). */
const KEPT = 16;

/** The fields a target may have for its event's template to be kept. */
const SIMPLE_FIELDS = ["mediaType", "digest", "size", "length", "repository", "url", "tag"] as const;

/** The bytes from `,"action"` to the end of `"source":{…}`, and what they were made from. */
interface Template {
  action: EventAction;
  actor: string | undefined;
  source: RegistryEvent["source"];
  /** A copy of the target's fields: the caller's object may change after this. */
  target: EventTarget;
  /** The caller's target itself when it was frozen (it cannot change): an event with this very object matches at once. */
  frozen: EventTarget | undefined;
  /** Whether `target` was simple: only then may another target match it by its fields. */
  simple: boolean;
  bytes: Uint8Array;
}

/** The request fields after the id, as both kinds of record have them. */
type Request = Omit<RequestParts, "id">;

/** The templates of event lines; one per notifier (its `includeReferences` and its templates). */
export class EventLines {
  readonly #includeReferences: boolean;
  readonly #kept: Template[] = [];
  #next = 0;
  #lastHit = 0;
  #request: Omit<Request, "id"> | undefined;
  #requestBytes: Uint8Array = new Uint8Array(0);

  constructor(includeReferences: boolean) {
    this.#includeReferences = includeReferences;
  }

  /**
   * Add `event` to `pending`: its line will be the bytes of
   * `JSON.stringify(event)`, with `target.references` only with
   * `includeReferences`.
   */
  add(pending: PendingEvents, event: RegistryEvent): void {
    const request = event.request;
    pending.addBuilt(this.middle(event.action, event.target, event.actor.name, event.source), request && this.requestFields(request), event.id, event.timestamp, request?.id);
  }

  /**
   * Add an event made now from its parts to `pending`, its id (and its
   * request's id unless the client sent one) drawn now: its line will be what
   * {@link add} gives for the event {@link eventEmitter} would build from them.
   */
  addParts(pending: PendingEvents, action: EventAction, target: EventTarget, actor: string | undefined, source: EventSource, request: RequestParts | undefined): void {
    pending.addNew(this.middle(action, target, actor || undefined, source), request && this.requestFields(request), request?.id);
  }

  /** `,"action":…,"target":…,"actor":…,"source":…` of an event, from a kept template when one matches. */
  middle(action: EventAction, target: EventTarget, actor: string | undefined, source: EventSource): Uint8Array {
    const last = this.#kept[this.#lastHit];
    if (last !== undefined && last.frozen === target && last.action === action && last.actor === actor && last.source === source) return last.bytes;
    const simple = isSimple(target, !this.#includeReferences);
    const frozen = Object.isFrozen(target);
    if (simple || frozen) {
      const kept = this.#kept;
      const n = kept.length;
      for (let k = 0; k < n; k++) {
        const i = (this.#lastHit + k) % n;
        const t = kept[i]!;
        if (t.action !== action || t.actor !== actor || t.source !== source) continue;
        if (t.frozen === target) {
          this.#lastHit = i;
          return t.bytes;
        }
        if (simple && t.simple && sameSimple(t.target, target)) {
          this.#lastHit = i;
          // A frozen target equal to the template's (a new one after its cache entry was made again) is the one
          // found by identity from now on; without this, every later event with it compared its fields.
          if (frozen) t.frozen = target;
          return t.bytes;
        }
      }
    }
    let json = target;
    if (!this.#includeReferences && target.references !== undefined) {
      const { references: _dropped, ...rest } = target;
      json = rest;
    }
    const actorJson = actor === undefined ? "{}" : `{"name":${JSON.stringify(actor)}}`;
    const bytes = bytesOf(`,"action":${JSON.stringify(action)},"target":${JSON.stringify(json)},"actor":${actorJson},"source":${JSON.stringify(source)}`);
    // A frozen target that is not simple (a pull's, with its references) is found by identity only: the
    // registry freezes its references too (pullTarget), so its JSON cannot change.
    if (simple || frozen) {
      const copy: EventTarget = {};
      for (const field of SIMPLE_FIELDS) if (target[field] !== undefined) (copy as Record<string, unknown>)[field] = target[field];
      this.#lastHit = this.#next;
      this.#kept[this.#next] = { action, actor, source, target: copy, frozen: frozen ? target : undefined, simple, bytes };
      this.#next = (this.#next + 1) % KEPT;
    }
    return bytes;
  }

  /** The request's fields after its id (`,"method":…`); a client's requests repeat them, so the last ones are kept. */
  requestFields(request: Request): Uint8Array {
    const last = this.#request;
    if (last && last.method === request.method && last.useragent === request.useragent && last.addr === request.addr && last.host === request.host) return this.#requestBytes;
    const { id: _id, ...fields } = request as Request & { id?: string };
    this.#request = { method: request.method, useragent: request.useragent, addr: request.addr, host: request.host };
    // The same bytes as in JSON.stringify(request): its fields, in its order, after the id.
    this.#requestBytes = bytesOf(`,${JSON.stringify(fields).slice(1, -1)}`);
    return this.#requestBytes;
  }
}

/**
 * Whether `target` has only fields of {@link SIMPLE_FIELDS}, in that order
 * (the order of the registry's targets), each a string or a number: then two
 * such targets with equal fields have the same JSON. `references` does not
 * count when the line leaves it out (`skipReferences`).
 */
function isSimple(target: EventTarget, skipReferences: boolean): boolean {
  let j = 0;
  for (const key in target) {
    if (skipReferences && key === "references") continue;
    while (j < SIMPLE_FIELDS.length && SIMPLE_FIELDS[j] !== key) j++;
    if (j === SIMPLE_FIELDS.length) return false;
    const value: unknown = target[SIMPLE_FIELDS[j]!];
    if (typeof value !== "string" && typeof value !== "number") return false;
    j++;
  }
  return true;
}

/** Whether two simple targets have the same fields (cheapest and most telling first). */
function sameSimple(a: EventTarget, b: EventTarget): boolean {
  return a.size === b.size && a.digest === b.digest && a.tag === b.tag && a.url === b.url && a.repository === b.repository && a.mediaType === b.mediaType && a.length === b.length;
}
