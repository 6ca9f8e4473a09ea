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
 * The records are columns of typed arrays (indexes into a short list of the
 * shared parts, counters as their two 24-bit halves so that they are written
 * with integer arithmetic, and milliseconds), not JavaScript arrays: a batch
 * waits in memory longer than two young-generation collections, and arrays
 * of that age were copied into the old generation (25 KB a collection of the
 * bench server with a sink). A typed array's elements are outside the
 * collected heap, so they are never copied.
 *
 * @module
 */
import { timestampBytesAt, timestampLength } from "./clock.js";
import { HALF, halvesInto, idPrefix, takeId } from "./ids.js";
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

/** Records a new list has room for; it doubles when full. */
const FIRST_CAPACITY = 64;
/** The most room a list keeps for the records after a take (a backlog's room is not kept for the batches after it). */
const KEPT_CAPACITY = 4096;
/** Parts an event's part is looked for among, newest first, before it is added as another. */
const PART_LOOKBACK = 8;

// Each record is REFS Int32 slots and one Float64 (its time).
const REFS = 8;
/** The index of the record's middle template in the parts. */
const MIDDLE = 0;
/** The index of its request's fields, or -1: the event has no `request`. */
const FIELDS = 1;
/** The index of its id's prefix, or -1: its id is the text in `#idText`. */
const ID_PREFIX = 2;
/** The index of its request id's prefix, or -1: the id is the text in `#requestIdText` (or there is no request). */
const REQUEST_PREFIX = 3;
/** Its id's counter, as two 24-bit halves (see `halvesInto`). */
const ID_HIGH = 4;
const ID_LOW = 5;
/** Its request id's counter, the same way. */
const REQUEST_HIGH = 6;
const REQUEST_LOW = 7;

/** Events in the order they were recorded, each as its parts (see the module comment). */
export class PendingEvents {
  #count = 0;
  /** REFS slots a record; as many records as `#times` has room for. */
  #refs: Int32Array;
  /** Milliseconds, or NaN: the timestamp is the text in `#timeText`. */
  #times: Float64Array;
  /** The templates and id prefixes the records point into. */
  #parts: Uint8Array[] = [];
  // Ids and times given as text (events built already), by record; made on the first one.
  #idText: (string | undefined)[] | undefined;
  #timeText: (string | undefined)[] | undefined;
  #requestIdText: (string | undefined)[] | undefined;
  /** An upper bound of the bytes of the lines held (for the notifier's memory bound). */
  #size = 0;
  #since = 0;

  constructor(capacity = FIRST_CAPACITY) {
    this.#refs = new Int32Array(capacity * REFS);
    this.#times = new Float64Array(capacity);
  }

  /** Events held. */
  get count(): number {
    return this.#count;
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
    const i = this.#next(now);
    const r = i * REFS;
    this.#refs[r + MIDDLE] = this.#part(middle);
    this.#refs[r + FIELDS] = fields === undefined ? -1 : this.#part(fields);
    this.#setCounter(r + ID_HIGH, takeId());
    this.#refs[r + ID_PREFIX] = this.#part(idPrefix());
    this.#times[i] = now;
    if (fields !== undefined && requestId === undefined) {
      this.#setCounter(r + REQUEST_HIGH, takeId());
      this.#refs[r + REQUEST_PREFIX] = this.#part(idPrefix());
    } else {
      this.#refs[r + REQUEST_PREFIX] = -1;
      if (requestId !== undefined) (this.#requestIdText ??= [])[i] = requestId;
    }
    this.#size += this.#room(i);
  }

  /** An event built already: its id, timestamp and request id as they are. */
  addBuilt(middle: Uint8Array, fields: Uint8Array | undefined, id: string, timestamp: string, requestId: string | undefined): void {
    const i = this.#next(Date.now());
    const r = i * REFS;
    this.#refs[r + MIDDLE] = this.#part(middle);
    this.#refs[r + FIELDS] = fields === undefined ? -1 : this.#part(fields);
    this.#refs[r + ID_PREFIX] = -1;
    (this.#idText ??= [])[i] = id;
    this.#times[i] = NaN;
    (this.#timeText ??= [])[i] = timestamp;
    this.#refs[r + REQUEST_PREFIX] = -1;
    if (fields !== undefined) (this.#requestIdText ??= [])[i] = requestId ?? "";
    this.#size += this.#room(i);
  }

  /** Event `i` of `other` (an event several endpoints take: the same ids and time). */
  addCopy(other: PendingEvents, i: number): void {
    const j = this.#next(Date.now());
    this.#copyRecord(j, other, i);
    this.#size += this.#room(j);
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
    count = Math.min(count, this.#count);
    // The taken events keep the columns and the rest are copied out of them: a delivery takes whole batches as
    // soon as one is full, so the rest is a few events where the taken ones are a thousand.
    const taken = new PendingEvents(0);
    taken.#count = count;
    taken.#refs = this.#refs;
    taken.#times = this.#times;
    taken.#parts = this.#parts;
    taken.#idText = this.#idText;
    taken.#timeText = this.#timeText;
    taken.#requestIdText = this.#requestIdText;
    taken.#since = this.#since;
    const restCount = this.#count - count;
    const capacity = Math.max(FIRST_CAPACITY, Math.min(taken.#times.length, KEPT_CAPACITY), restCount);
    this.#refs = new Int32Array(capacity * REFS);
    this.#times = new Float64Array(capacity);
    this.#parts = [];
    this.#idText = this.#timeText = this.#requestIdText = undefined;
    this.#count = restCount;
    for (let i = 0; i < restCount; i++) this.#copyRecord(i, taken, count + i);
    if (restCount === 0) taken.#size = this.#size;
    else for (let i = 0; i < count; i++) taken.#size += taken.#room(i);
    this.#size -= taken.#size;
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

  /** The index of a new record (the columns grown when full); `now` starts {@link since} for the first. */
  #next(now: number): number {
    if (this.#count === 0) this.#since = now;
    if (this.#count === this.#times.length) {
      const capacity = Math.max(FIRST_CAPACITY, this.#count * 2);
      const refs = new Int32Array(capacity * REFS);
      refs.set(this.#refs);
      this.#refs = refs;
      const times = new Float64Array(capacity);
      times.set(this.#times);
      this.#times = times;
    }
    return this.#count++;
  }

  /** The index of `part` in the parts, added when it is not among the last few (events repeat the same few). */
  #part(part: Uint8Array): number {
    const parts = this.#parts;
    const n = parts.length;
    for (let k = n - 1; k >= 0 && k >= n - PART_LOOKBACK; k--) if (parts[k] === part) return k;
    parts.push(part);
    return n;
  }

  /** A counter (below 2^48) into the two slots from `slot`, as its 24-bit halves. */
  #setCounter(slot: number, counter: number): void {
    const low = counter % HALF;
    this.#refs[slot] = (counter - low) / HALF;
    this.#refs[slot + 1] = low;
  }

  /** Record `i` of `other` into record `j` of this list (made already). */
  #copyRecord(j: number, other: PendingEvents, i: number): void {
    const r = j * REFS;
    const o = i * REFS;
    const refs = other.#refs;
    const parts = other.#parts;
    const ref = (slot: number): number => (refs[o + slot]! < 0 ? -1 : this.#part(parts[refs[o + slot]!]!));
    this.#refs[r + MIDDLE] = ref(MIDDLE);
    this.#refs[r + FIELDS] = ref(FIELDS);
    this.#refs[r + ID_PREFIX] = ref(ID_PREFIX);
    this.#refs[r + REQUEST_PREFIX] = ref(REQUEST_PREFIX);
    for (let k = ID_HIGH; k <= REQUEST_LOW; k++) this.#refs[r + k] = refs[o + k]!;
    this.#times[j] = other.#times[i]!;
    const id = other.#idText?.[i];
    if (id !== undefined) (this.#idText ??= [])[j] = id;
    const time = other.#timeText?.[i];
    if (time !== undefined) (this.#timeText ??= [])[j] = time;
    const requestId = other.#requestIdText?.[i];
    if (requestId !== undefined) (this.#requestIdText ??= [])[j] = requestId;
  }

  /** At least the bytes of event `i`'s line and the newline or comma after it. */
  #room(i: number): number {
    const r = i * REFS;
    const time = this.#times[i]!;
    let room = ID.length + (this.#refs[r + ID_PREFIX]! >= 0 ? ID_ROOM : stringRoom(this.#idText![i]!)) + TIMESTAMP.length;
    room += (time === time ? TIME_ROOM : stringRoom(this.#timeText![i]!)) + this.#parts[this.#refs[r + MIDDLE]!]!.length + CLOSE_REQUEST.length + 1;
    const fields = this.#refs[r + FIELDS]!;
    if (fields >= 0) room += REQUEST_ID.length + (this.#refs[r + REQUEST_PREFIX]! >= 0 ? ID_ROOM : stringRoom(this.#requestIdText![i]!)) + this.#parts[fields]!.length;
    return room;
  }

  /** Event `i`'s line into `out` at `at` (room was made); returns the offset after it. */
  #write(out: Uint8Array, at: number, i: number): number {
    const r = i * REFS;
    const refs = this.#refs;
    at = copy(out, at, ID);
    const idPrefixAt = refs[r + ID_PREFIX]!;
    at = idPrefixAt >= 0 ? writeCounter(out, at, this.#parts[idPrefixAt]!, refs[r + ID_HIGH]!, refs[r + ID_LOW]!) : writeString(out, at, this.#idText![i]!);
    at = copy(out, at, TIMESTAMP);
    const time = this.#times[i]!;
    if (time === time) {
      out[at++] = QUOTE;
      at = copy(out, at, timestampBytesAt(time));
      out[at++] = QUOTE;
    } else {
      at = writeString(out, at, this.#timeText![i]!);
    }
    at = copy(out, at, this.#parts[refs[r + MIDDLE]!]!);
    const fields = refs[r + FIELDS]!;
    if (fields < 0) return copy(out, at, CLOSE);
    at = copy(out, at, REQUEST_ID);
    const requestPrefixAt = refs[r + REQUEST_PREFIX]!;
    at = requestPrefixAt >= 0 ? writeCounter(out, at, this.#parts[requestPrefixAt]!, refs[r + REQUEST_HIGH]!, refs[r + REQUEST_LOW]!) : writeString(out, at, this.#requestIdText![i]!);
    at = copy(out, at, this.#parts[fields]!);
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
    const refs = this.#refs;
    const r = i * REFS;
    const q = r - REFS;
    if (refs[r + MIDDLE] !== refs[q + MIDDLE] || refs[r + FIELDS] !== refs[q + FIELDS] || refs[r + ID_PREFIX] !== refs[q + ID_PREFIX] || refs[r + ID_PREFIX]! < 0) return false;
    const time = this.#times[i]!;
    const before = this.#times[i - 1]!;
    if (time !== time || before !== before) return false;
    if (refs[r + FIELDS]! < 0) return true;
    return refs[r + REQUEST_PREFIX] === refs[q + REQUEST_PREFIX] && refs[r + REQUEST_PREFIX]! >= 0;
  }

  /**
   * Event `i`'s line into `out` at `at`, as a copy of event `i - 1`'s (at
   * `start` to `end` in `out`; {@link repeats} holds) with its id, its time
   * and its request's id written over; returns the offset after it.
   */
  #copyPrevious(out: Uint8Array, at: number, i: number, start: number, end: number): number {
    const refs = this.#refs;
    const parts = this.#parts;
    const r = i * REFS;
    const time = this.#times[i]!;
    const sameTime = time === this.#times[i - 1];
    // A time of another length (after the year 9999) moves what follows it: written whole then.
    if (!sameTime && timestampLength(time) !== timestampLength(this.#times[i - 1]!)) return this.#write(out, at, i);
    const timeBytes = timestampBytesAt(time);
    out.copyWithin(at, start, end);
    const idAt = at + ID.length + 1 + parts[refs[r + ID_PREFIX]!]!.length;
    halvesInto(out, idAt, refs[r + ID_HIGH]!, refs[r + ID_LOW]!);
    const timeAt = idAt + 12 + 1 + TIMESTAMP.length + 1;
    if (!sameTime) copy(out, timeAt, timeBytes);
    if (refs[r + FIELDS]! >= 0) {
      const requestIdAt = timeAt + timeBytes.length + 1 + parts[refs[r + MIDDLE]!]!.length + REQUEST_ID.length + 1 + parts[refs[r + REQUEST_PREFIX]!]!.length;
      halvesInto(out, requestIdAt, refs[r + REQUEST_HIGH]!, refs[r + REQUEST_LOW]!);
    }
    return at + (end - start);
  }
}

/** A drawn id: its prefix and counter, in quotes. */
function writeCounter(out: Uint8Array, at: number, prefix: Uint8Array, high: number, low: number): number {
  out[at++] = QUOTE;
  at = copy(out, at, prefix);
  at = halvesInto(out, at, high, low);
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
