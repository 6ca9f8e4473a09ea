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
 * event that has equal fields; an event then costs copying two templates and
 * writing three short strings, not a serialization.
 *
 * @module
 */
import { timestampBytesNow } from "./clock.js";
import { nextIdInto } from "./ids.js";
import type { EventAction, EventSource, EventTarget, RegistryEvent } from "./model.js";
import type { RequestParts } from "./request.js";

const encoder = new TextEncoder();
const bytesOf = (text: string): Uint8Array => encoder.encode(text);
const ID = bytesOf('{"id":');
const TIMESTAMP = bytesOf(',"timestamp":');
const REQUEST_ID = bytesOf(',"request":{"id":');
const CLOSE_REQUEST = bytesOf("}}");
const CLOSE = bytesOf("}");
const QUOTE = 0x22;
/** Room for a drawn id or a timestamp with their quotes. */
const STAMP_ROOM = 40;

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
  bytes: Uint8Array;
}

/** The request fields after the id, as both kinds of record have them. */
type Request = Omit<RequestParts, "id">;

/** Serializes events into outbox lines; one per notifier (its `includeReferences` and its templates). */
export class EventLines {
  readonly #includeReferences: boolean;
  readonly #kept: Template[] = [];
  #next = 0;
  #lastHit = 0;
  #request: Omit<Request, "id"> | undefined;
  #requestBytes: Uint8Array = new Uint8Array(0);
  #out: Uint8Array = new Uint8Array(4096);
  #at = 0;

  constructor(includeReferences: boolean) {
    this.#includeReferences = includeReferences;
  }

  /**
   * The line of `event`: the bytes of `JSON.stringify(event)`, with
   * `target.references` only with `includeReferences`. A view valid until the
   * next call.
   */
  encode(event: RegistryEvent): Uint8Array {
    const middle = this.#middle(event.action, event.target, event.actor.name, event.source);
    const request = event.request;
    const fields = request ? this.#requestFields(request) : undefined;
    this.#at = 0;
    this.#reserve(ID.length + TIMESTAMP.length + middle.length + REQUEST_ID.length + (fields?.length ?? 0) + CLOSE_REQUEST.length);
    this.#bytes(ID);
    this.#string(event.id);
    this.#bytes(TIMESTAMP);
    this.#string(event.timestamp);
    this.#bytes(middle);
    if (request) {
      this.#bytes(REQUEST_ID);
      this.#string(request.id);
      this.#bytes(fields!);
      this.#bytes(CLOSE_REQUEST);
    } else {
      this.#bytes(CLOSE);
    }
    return this.#out.subarray(0, this.#at);
  }

  /**
   * The line of an event made now from its parts, with a fresh id (and a
   * fresh request id unless the client sent one): the bytes `encode` gives
   * for the event {@link eventEmitter} would build from them, written without
   * building it (the emitter does so for a sink that offers this). A view
   * valid until the next call.
   */
  encodeParts(action: EventAction, target: EventTarget, actor: string | undefined, source: EventSource, request: RequestParts | undefined): Uint8Array {
    const middle = this.#middle(action, target, actor || undefined, source);
    const fields = request ? this.#requestFields(request) : undefined;
    this.#at = 0;
    this.#reserve(ID.length + TIMESTAMP.length + 2 * STAMP_ROOM + middle.length + REQUEST_ID.length + STAMP_ROOM + (fields?.length ?? 0) + CLOSE_REQUEST.length);
    this.#bytes(ID);
    this.#drawnId();
    this.#bytes(TIMESTAMP);
    this.#out[this.#at++] = QUOTE;
    this.#bytes(timestampBytesNow());
    this.#out[this.#at++] = QUOTE;
    this.#bytes(middle);
    if (request) {
      this.#bytes(REQUEST_ID);
      if (request.id === undefined) this.#drawnId();
      else this.#string(request.id);
      this.#bytes(fields!);
      this.#bytes(CLOSE_REQUEST);
    } else {
      this.#bytes(CLOSE);
    }
    return this.#out.subarray(0, this.#at);
  }

  /** A new id of this process, in quotes (room was reserved). */
  #drawnId(): void {
    const out = this.#out;
    out[this.#at] = QUOTE;
    this.#at = nextIdInto(out, this.#at + 1);
    out[this.#at++] = QUOTE;
  }

  /** `,"action":…,"target":…,"actor":…,"source":…` of an event, from a kept template when one matches. */
  #middle(action: EventAction, target: EventTarget, actor: string | undefined, source: EventSource): Uint8Array {
    const simple = isSimple(target);
    if (simple) {
      const kept = this.#kept;
      const n = kept.length;
      for (let k = 0; k < n; k++) {
        const i = (this.#lastHit + k) % n;
        const t = kept[i]!;
        if (t.action === action && t.actor === actor && t.source === source && sameSimple(t.target, target)) {
          this.#lastHit = i;
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
    if (simple) {
      const copy: EventTarget = {};
      for (const field of SIMPLE_FIELDS) if (target[field] !== undefined) (copy as Record<string, unknown>)[field] = target[field];
      this.#kept[this.#next] = { action, actor, source, target: copy, bytes };
      this.#next = (this.#next + 1) % KEPT;
    }
    return bytes;
  }

  /** The request's fields after its id (`,"method":…`); a client's requests repeat them, so the last ones are kept. */
  #requestFields(request: Request): Uint8Array {
    const last = this.#request;
    if (last && last.method === request.method && last.useragent === request.useragent && last.addr === request.addr && last.host === request.host) return this.#requestBytes;
    const { id: _id, ...fields } = request as Request & { id?: string };
    this.#request = { method: request.method, useragent: request.useragent, addr: request.addr, host: request.host };
    // The same bytes as in JSON.stringify(request): its fields, in its order, after the id.
    this.#requestBytes = bytesOf(`,${JSON.stringify(fields).slice(1, -1)}`);
    return this.#requestBytes;
  }

  #reserve(more: number): void {
    if (this.#at + more <= this.#out.length) return;
    const grown = new Uint8Array(Math.max(this.#out.length * 2, this.#at + more));
    grown.set(this.#out.subarray(0, this.#at));
    this.#out = grown;
  }

  #bytes(bytes: Uint8Array): void {
    const n = bytes.length;
    if (n > 32) {
      this.#out.set(bytes, this.#at);
    } else {
      // The short pieces of every line: a loop costs less than a call of `set`.
      const out = this.#out;
      const at = this.#at;
      for (let i = 0; i < n; i++) out[at + i] = bytes[i]!;
    }
    this.#at += n;
  }

  /** `value` as a JSON string: byte by byte while it is printable ASCII without `"` or `\`, else through JSON.stringify. */
  #string(value: string): void {
    const n = value.length;
    this.#reserve(n + 2);
    const out = this.#out;
    const start = this.#at;
    let at = start;
    out[at++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = value.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
        this.#at = start;
        const json = JSON.stringify(value);
        this.#reserve(json.length * 3);
        this.#at += encoder.encodeInto(json, this.#out.subarray(this.#at)).written;
        return;
      }
      out[at++] = c;
    }
    out[at++] = 0x22;
    this.#at = at;
  }
}

/**
 * Whether `target` has only fields of {@link SIMPLE_FIELDS}, in that order
 * (the order of the registry's targets), each a string or a number: then two
 * such targets with equal fields have the same JSON.
 */
function isSimple(target: EventTarget): boolean {
  let j = 0;
  for (const key in target) {
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
