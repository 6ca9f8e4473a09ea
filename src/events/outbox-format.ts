/**
 * The outbox's bytes: one event per line, as the JSON a webhook receives, and
 * envelopes assembled from stored lines without parsing them again.
 *
 * An event is serialized once, when it is recorded; delivery only cuts the
 * stored object into lines and joins up to a batch of them between
 * `{"events":[` and `]}`. Pulls, the bulk of the traffic, repeat the same
 * target (a manifest pulled by the same tag, through the same host), so the
 * JSON of a recent target is kept for the next event that has the same one.
 *
 * @module
 */
import type { EventTarget, RegistryEvent } from "./model.js";

const encoder = new TextEncoder();
const NEWLINE = 0x0a;
const OPEN = encoder.encode('{"events":[');
const CLOSE = encoder.encode("]}");
const COMMA = encoder.encode(",");
/** Recent targets whose JSON is kept, compared field by field (a registry's pulls repeat a few images). */
const KEPT_TARGETS = 16;

/** The fields a pull's or push's target may have for its JSON to be kept. */
const SIMPLE_FIELDS = ["mediaType", "digest", "size", "length", "repository", "url", "tag"] as const;

interface KeptTarget {
  fields: EventTarget;
  json: string;
}

/** Serializes events into outbox lines; one per notifier (its `includeReferences` and its cache of targets). */
export class EventLines {
  readonly #includeReferences: boolean;
  readonly #kept: KeptTarget[] = [];
  #next = 0;
  #source: RegistryEvent["source"] | undefined;
  #sourceJson = "";
  #actorName: string | undefined;
  #actorJson = "";
  #request: RegistryEvent["request"];
  #requestJson = "";

  constructor(includeReferences: boolean) {
    this.#includeReferences = includeReferences;
  }

  /**
   * The JSON of `event` (no newline in it), with the fields of
   * {@link RegistryEvent} in their order; `target.references` only with
   * `includeReferences`.
   */
  line(event: RegistryEvent): string {
    const { request } = event;
    const head = `{"id":${JSON.stringify(event.id)},"timestamp":${JSON.stringify(event.timestamp)},"action":${JSON.stringify(event.action)},"target":${this.#target(event.target)},"actor":${this.#actorText(event.actor)},"source":${this.#sourceText(event.source)}`;
    return request ? `${head},"request":{"id":${JSON.stringify(request.id)},${this.#requestText(request)}}}` : `${head}}`;
  }

  #actorText(actor: RegistryEvent["actor"]): string {
    const name = actor.name;
    if (name === undefined) return "{}";
    if (name !== this.#actorName) {
      this.#actorName = name;
      this.#actorJson = `{"name":${JSON.stringify(name)}}`;
    }
    return this.#actorJson;
  }

  /** The request's fields after its id; a client's requests repeat them, so the last ones are kept. */
  #requestText(request: NonNullable<RegistryEvent["request"]>): string {
    const last = this.#request;
    if (last && last.method === request.method && last.useragent === request.useragent && last.addr === request.addr && last.host === request.host) return this.#requestJson;
    let text = `"method":${JSON.stringify(request.method)},"useragent":${JSON.stringify(request.useragent)}`;
    if (request.addr !== undefined) text += `,"addr":${JSON.stringify(request.addr)}`;
    if (request.host !== undefined) text += `,"host":${JSON.stringify(request.host)}`;
    this.#request = { id: "", method: request.method, useragent: request.useragent, addr: request.addr, host: request.host };
    this.#requestJson = text;
    return text;
  }

  #sourceText(source: RegistryEvent["source"]): string {
    // One source object per service: serialized once.
    if (source !== this.#source) {
      this.#source = source;
      this.#sourceJson = JSON.stringify(source);
    }
    return this.#sourceJson;
  }

  #target(target: EventTarget): string {
    if (!isSimple(target)) {
      if (this.#includeReferences || target.references === undefined) return JSON.stringify(target);
      const { references: _dropped, ...rest } = target;
      return JSON.stringify(rest);
    }
    for (const kept of this.#kept) if (sameSimple(kept.fields, target)) return kept.json;
    // A copy: the caller's object may change after this.
    const fields: EventTarget = {};
    for (const field of SIMPLE_FIELDS) if (target[field] !== undefined) (fields as Record<string, unknown>)[field] = target[field];
    const json = JSON.stringify(target);
    this.#kept[this.#next] = { fields, json };
    this.#next = (this.#next + 1) % KEPT_TARGETS;
    return json;
  }
}

/** Whether `target` has only fields of {@link SIMPLE_FIELDS}, each a string or a number. */
function isSimple(target: EventTarget): boolean {
  let simple = 0;
  for (const field of SIMPLE_FIELDS) {
    const value: unknown = target[field];
    if (value === undefined) continue;
    if (typeof value !== "string" && typeof value !== "number") return false;
    simple++;
  }
  let fields = 0;
  for (const _ in target) fields++;
  return fields === simple;
}

/** Whether two simple targets have the same fields (cheapest and most telling first). */
function sameSimple(a: EventTarget, b: EventTarget): boolean {
  return a.size === b.size && a.digest === b.digest && a.tag === b.tag && a.url === b.url && a.repository === b.repository && a.mediaType === b.mediaType && a.length === b.length;
}

/**
 * Event lines encoded as they come, into one growing buffer (outside the
 * JavaScript heap, so that a second of pulls held for the next write costs the
 * garbage collector nothing).
 */
export class LineBuffer {
  #bytes = new Uint8Array(64 * 1024);
  #size = 0;
  /** Lines held. */
  count = 0;

  /** Add `line` (which holds no newline) and a newline. */
  push(line: string): void {
    const worst = this.#size + line.length * 3 + 1;
    if (worst > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(worst, this.#bytes.length * 2));
      grown.set(this.#bytes.subarray(0, this.#size));
      this.#bytes = grown;
    }
    this.#size += encoder.encodeInto(line, this.#bytes.subarray(this.#size)).written;
    this.#bytes[this.#size++] = NEWLINE;
    this.count++;
  }

  /** The bytes of the lines held (an outbox object), and empty the buffer. */
  take(): Uint8Array<ArrayBuffer> {
    const bytes = this.#bytes.slice(0, this.#size);
    this.#size = 0;
    this.count = 0;
    return bytes;
  }
}

/**
 * The event lines of a stored object: byte ranges of `bytes`, without the
 * newlines. An object written by an earlier version (a JSON array of events)
 * is read too. Lines that cannot be an event's JSON (not `{…}`) are left out
 * and counted in `skipped`.
 */
export function decodeLines(bytes: Uint8Array): { lines: Uint8Array[]; skipped: number } {
  if (bytes[0] === 0x5b /* [ */) {
    const events = JSON.parse(new TextDecoder().decode(bytes)) as unknown[];
    return { lines: events.map((event) => encoder.encode(JSON.stringify(event))), skipped: 0 };
  }
  const lines: Uint8Array[] = [];
  let skipped = 0;
  for (let start = 0; start < bytes.length; ) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end < 0) end = bytes.length;
    if (end > start) {
      if (bytes[start] === 0x7b /* { */ && bytes[end - 1] === 0x7d /* } */) lines.push(bytes.subarray(start, end));
      else skipped++;
    }
    start = end + 1;
  }
  return { lines, skipped };
}

/** The body of one webhook POST: `{"events":[` the lines, comma-separated, `]}`. */
export function envelope(lines: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  let size = OPEN.length + CLOSE.length + Math.max(0, lines.length - 1);
  for (const line of lines) size += line.length;
  const body = new Uint8Array(size);
  body.set(OPEN, 0);
  let at = OPEN.length;
  lines.forEach((line, i) => {
    if (i > 0) body.set(COMMA, at++);
    body.set(line, at);
    at += line.length;
  });
  body.set(CLOSE, at);
  return body;
}
