/**
 * Events waiting in memory for the outbox, kept as their parts instead of
 * their JSON: the two templates of the line (from `,"action"` to the end of
 * `"source"`, and the request's fields after its id; EventLines keeps them,
 * and the events that repeat them share them), the ids (a string, or a
 * counter under the prefix in force when it was drawn) and the time.
 *
 * Recording a pull is then a few stores on the request path; its line is
 * written once, straight into the envelope that sends it or the outbox
 * object that stores it, instead of being written into a scratch buffer,
 * copied into the pending lines and copied again into the envelope. A record
 * written twice gives the same bytes: its ids and time were fixed when it was
 * recorded, so a batch the endpoint refused is stored with the ids it was
 * sent with.
 *
 * @module
 */
import { timestampBytesAt } from "./clock.js";
import { counterInto, idPrefix, takeId } from "./ids.js";
import type { ObjectLines } from "./outbox-format.js";

const encoder = new TextEncoder();
const ID = encoder.encode('{"id":');
const TIMESTAMP = encoder.encode(',"timestamp":');
const REQUEST_ID = encoder.encode(',"request":{"id":');
const CLOSE_REQUEST = encoder.encode("}}");
const CLOSE = encoder.encode("}");
const OPEN_ENVELOPE = encoder.encode('{"events":[');
const CLOSE_ENVELOPE = encoder.encode("]}");
const QUOTE = 0x22;
const NEWLINE = 0x0a;
const COMMA = 0x2c;
/** A drawn id in quotes. */
const ID_ROOM = 38;
/** A timestamp kept as milliseconds, in quotes (27 bytes after the year 9999). */
const TIME_ROOM = 29;
/** Room for `text` as a JSON string: at most 6 bytes per UTF-16 unit (`\uXXXX`; a character kept as it is takes at most 3), and the quotes. */
const stringRoom = (text: string): number => 6 * text.length + 2;

/** An id: a string as given, or a counter under a prefix (see `IdSpace.take`). */
type Id = string | number;

/** Events in the order they were recorded, each as its parts (see the module comment). */
export class PendingEvents {
  #middles: Uint8Array[] = [];
  /** `undefined`: the event has no `request`. */
  #fields: (Uint8Array | undefined)[] = [];
  #ids: Id[] = [];
  #idPrefixes: (Uint8Array | undefined)[] = [];
  /** Milliseconds (written as RFC 3339), or the timestamp as given. */
  #times: (number | string)[] = [];
  #requestIds: (Id | undefined)[] = [];
  #requestPrefixes: (Uint8Array | undefined)[] = [];
  /** An upper bound of the bytes of the lines held (for the notifier's memory bound). */
  #size = 0;
  #since = 0;

  /** Events held. */
  get count(): number {
    return this.#middles.length;
  }

  /** At least the bytes the events' lines take. */
  get size(): number {
    return this.#size;
  }

  /** When the oldest event held was recorded (`Date.now()`); see {@link takeFirst}. */
  get since(): number {
    return this.#since;
  }

  /**
   * An event made now: its id drawn from this process's id space, its
   * request's id too unless the client sent one (`requestId`), its time now.
   * `fields` are the request's fields after its id; without them the event
   * has no `request`.
   */
  addNew(middle: Uint8Array, fields: Uint8Array | undefined, requestId: string | undefined): void {
    const now = Date.now();
    if (this.#middles.length === 0) this.#since = now;
    this.#middles.push(middle);
    this.#fields.push(fields);
    this.#ids.push(takeId());
    this.#idPrefixes.push(idPrefix());
    this.#times.push(now);
    const drawn = fields !== undefined && requestId === undefined;
    this.#requestIds.push(drawn ? takeId() : fields === undefined ? undefined : requestId);
    this.#requestPrefixes.push(drawn ? idPrefix() : undefined);
    this.#size += this.#room(this.#middles.length - 1);
  }

  /** An event built already: its id, timestamp and request id as they are. */
  addBuilt(middle: Uint8Array, fields: Uint8Array | undefined, id: string, timestamp: string, requestId: string | undefined): void {
    if (this.#middles.length === 0) this.#since = Date.now();
    this.#middles.push(middle);
    this.#fields.push(fields);
    this.#ids.push(id);
    this.#idPrefixes.push(undefined);
    this.#times.push(timestamp);
    this.#requestIds.push(fields === undefined ? undefined : (requestId ?? ""));
    this.#requestPrefixes.push(undefined);
    this.#size += this.#room(this.#middles.length - 1);
  }

  /** Event `i` of `other` (an event several endpoints take: the same ids and time). */
  addCopy(other: PendingEvents, i: number): void {
    if (this.#middles.length === 0) this.#since = Date.now();
    this.#middles.push(other.#middles[i]!);
    this.#fields.push(other.#fields[i]);
    this.#ids.push(other.#ids[i]!);
    this.#idPrefixes.push(other.#idPrefixes[i]);
    this.#times.push(other.#times[i]!);
    this.#requestIds.push(other.#requestIds[i]);
    this.#requestPrefixes.push(other.#requestPrefixes[i]);
    this.#size += other.#room(i);
  }

  /** Every event held, and empty this list. */
  take(): PendingEvents {
    return this.takeFirst(this.count);
  }

  /**
   * The first `count` events, removed from this list. The events kept stay as
   * old as the oldest taken for {@link since}: a bound met early, never late.
   */
  takeFirst(count: number): PendingEvents {
    const taken = new PendingEvents();
    const all = count >= this.count;
    // The taken events keep the arrays and the rest are copied out of them: a delivery takes whole batches as
    // soon as one is full, so the rest is a few events where the taken ones are a thousand.
    taken.#middles = this.#middles;
    taken.#fields = this.#fields;
    taken.#ids = this.#ids;
    taken.#idPrefixes = this.#idPrefixes;
    taken.#times = this.#times;
    taken.#requestIds = this.#requestIds;
    taken.#requestPrefixes = this.#requestPrefixes;
    this.#middles = rest(taken.#middles, count);
    this.#fields = rest(taken.#fields, count);
    this.#ids = rest(taken.#ids, count);
    this.#idPrefixes = rest(taken.#idPrefixes, count);
    this.#times = rest(taken.#times, count);
    this.#requestIds = rest(taken.#requestIds, count);
    this.#requestPrefixes = rest(taken.#requestPrefixes, count);
    if (all) taken.#size = this.#size;
    else for (let i = 0; i < taken.count; i++) taken.#size += taken.#room(i);
    this.#size -= taken.#size;
    taken.#since = this.#since;
    return taken;
  }

  /** Events `from` to `to` (excluded) as an outbox object: each line, then a newline. */
  lines(from = 0, to = this.count): ObjectLines & { bytes: Uint8Array<ArrayBuffer> } {
    let room = 0;
    for (let i = from; i < to; i++) room += this.#room(i);
    const out = new Uint8Array(room);
    const starts: number[] = [];
    const ends: number[] = [];
    let at = 0;
    for (let i = from; i < to; i++) {
      starts.push(at);
      at = i > from && this.#repeats(i) ? this.#copyPrevious(out, at, i, starts[i - from - 1]!, ends[i - from - 1]!) : this.#write(out, at, i);
      ends.push(at);
      out[at++] = NEWLINE;
    }
    return { bytes: out.subarray(0, at), starts, ends };
  }

  /** Events `from` to `to` (excluded) as the body of one webhook POST: `{"events":[` the lines, comma-separated, `]}`. */
  envelope(from: number, to: number): Uint8Array<ArrayBuffer> {
    let room = OPEN_ENVELOPE.length + CLOSE_ENVELOPE.length;
    for (let i = from; i < to; i++) room += this.#room(i);
    const out = new Uint8Array(room);
    out.set(OPEN_ENVELOPE, 0);
    let at = OPEN_ENVELOPE.length;
    let start = at;
    for (let i = from; i < to; i++) {
      if (i > from) out[at++] = COMMA;
      const end = i > from && this.#repeats(i) ? this.#copyPrevious(out, at, i, start, at - 1) : this.#write(out, at, i);
      start = at;
      at = end;
    }
    out.set(CLOSE_ENVELOPE, at);
    return out.subarray(0, at + CLOSE_ENVELOPE.length);
  }

  /** At least the bytes of event `i`'s line and the newline or comma after it. */
  #room(i: number): number {
    const id = this.#ids[i]!;
    const time = this.#times[i]!;
    const fields = this.#fields[i];
    let room = ID.length + idRoom(id) + TIMESTAMP.length + (typeof time === "number" ? TIME_ROOM : stringRoom(time)) + this.#middles[i]!.length + CLOSE_REQUEST.length + 1;
    if (fields !== undefined) room += REQUEST_ID.length + idRoom(this.#requestIds[i]!) + fields.length;
    return room;
  }

  /** Event `i`'s line into `out` at `at` (room was made); returns the offset after it. */
  #write(out: Uint8Array, at: number, i: number): number {
    at = copy(out, at, ID);
    at = writeId(out, at, this.#ids[i]!, this.#idPrefixes[i]);
    at = copy(out, at, TIMESTAMP);
    const time = this.#times[i]!;
    if (typeof time === "number") {
      out[at++] = QUOTE;
      at = copy(out, at, timestampBytesAt(time));
      out[at++] = QUOTE;
    } else {
      at = writeString(out, at, time);
    }
    at = copy(out, at, this.#middles[i]!);
    const fields = this.#fields[i];
    if (fields === undefined) return copy(out, at, CLOSE);
    at = copy(out, at, REQUEST_ID);
    at = writeId(out, at, this.#requestIds[i]!, this.#requestPrefixes[i]);
    at = copy(out, at, fields);
    return copy(out, at, CLOSE_REQUEST);
  }

  /**
   * Whether event `i`'s line is event `i - 1`'s but for its counters and
   * time: the same templates, both ids (and both request ids) counters under
   * the same prefixes, both times milliseconds. A registry's pulls are mostly
   * such runs, and copying the line before and patching it costs a fraction
   * of writing it piece by piece.
   */
  #repeats(i: number): boolean {
    const j = i - 1;
    if (this.#middles[i] !== this.#middles[j] || this.#fields[i] !== this.#fields[j] || this.#idPrefixes[i] !== this.#idPrefixes[j]) return false;
    if (typeof this.#ids[i] !== "number" || typeof this.#ids[j] !== "number" || typeof this.#times[i] !== "number" || typeof this.#times[j] !== "number") return false;
    if (this.#fields[i] === undefined) return true;
    return this.#requestPrefixes[i] === this.#requestPrefixes[j] && typeof this.#requestIds[i] === "number" && typeof this.#requestIds[j] === "number";
  }

  /**
   * Event `i`'s line into `out` at `at`, as a copy of event `i - 1`'s (at
   * `start` to `end` in `out`; {@link repeats} holds) with its id, its time
   * and its request's id written over; returns the offset after it.
   */
  #copyPrevious(out: Uint8Array, at: number, i: number, start: number, end: number): number {
    const time = timestampBytesAt(this.#times[i] as number);
    // A time of another length (after the year 9999) moves what follows it: written whole then.
    if (time.length !== timestampBytesAt(this.#times[i - 1] as number).length) return this.#write(out, at, i);
    out.copyWithin(at, start, end);
    const idAt = at + ID.length + 1 + this.#idPrefixes[i]!.length;
    counterInto(out, idAt, this.#ids[i] as number);
    const timeAt = idAt + 12 + 1 + TIMESTAMP.length + 1;
    if (this.#times[i] !== this.#times[i - 1]) copy(out, timeAt, time);
    if (this.#fields[i] !== undefined) {
      const requestIdAt = timeAt + time.length + 1 + this.#middles[i]!.length + REQUEST_ID.length + 1 + this.#requestPrefixes[i]!.length;
      counterInto(out, requestIdAt, this.#requestIds[i] as number);
    }
    return at + (end - start);
  }
}

/** The items of `items` after the first `count`, as a new array; `items` keeps the first `count`. */
function rest<T>(items: T[], count: number): T[] {
  if (count >= items.length) return [];
  const after = items.slice(count);
  items.length = count;
  return after;
}

const idRoom = (id: Id): number => (typeof id === "number" ? ID_ROOM : stringRoom(id));

function writeId(out: Uint8Array, at: number, id: Id, prefix: Uint8Array | undefined): number {
  if (typeof id !== "number") return writeString(out, at, id);
  out[at++] = QUOTE;
  at = copy(out, at, prefix!);
  at = counterInto(out, at, id);
  out[at++] = QUOTE;
  return at;
}

/** `bytes` into `out` at `at`; the short pieces of every line by a loop, which costs less than a call of `set`. */
function copy(out: Uint8Array, at: number, bytes: Uint8Array): number {
  const n = bytes.length;
  if (n > 32) out.set(bytes, at);
  else for (let i = 0; i < n; i++) out[at + i] = bytes[i]!;
  return at + n;
}

/** `value` as a JSON string: byte by byte while it is printable ASCII without `"` or `\`, else through JSON.stringify. */
function writeString(out: Uint8Array, at: number, value: string): number {
  const start = at;
  out[at++] = QUOTE;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === QUOTE || c === 0x5c) return start + encoder.encodeInto(JSON.stringify(value), out.subarray(start)).written;
    out[at++] = c;
  }
  out[at++] = QUOTE;
  return at;
}
