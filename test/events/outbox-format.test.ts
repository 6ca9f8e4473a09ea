/**
 * The outbox's bytes: an event's line is the bytes of JSON.stringify(event)
 * (references only when asked for), whether built from a kept template or
 * afresh; kept templates never stand for another event; stored objects
 * (current and earlier format) read back into lines, and an envelope of lines
 * parses to the events.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RegistryEvent } from "../../src/events/index.js";
import { EventLines } from "../../src/events/event-json.js";
import { requestParts, requestRecord } from "../../src/events/request.js";
import { lightRequest } from "../../src/node/light-request.js";
import { decodeLines, envelope, type ObjectLines } from "../../src/events/outbox-format.js";
import { PendingEvents } from "../../src/events/pending-events.js";
import { idPrefix, takeId } from "../../src/events/ids.js";

const source = { instanceID: "3f1c2a9e-0b7d-4c55-9e61-2d8f0a6b7c11" };
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
/** The one line of `pending`, as text. */
function only(pending: PendingEvents): string {
  const { bytes, ends } = pending.lines();
  expect(ends.length).toBe(1);
  return text(bytes.subarray(0, ends[0]));
}
/** The line `lines` writes for `event`. */
function lineOf(lines: EventLines, event: RegistryEvent): string {
  const one = new PendingEvents();
  lines.add(one, event);
  return only(one);
}
function pull(i: number, target: Partial<RegistryEvent["target"]> = {}): RegistryEvent {
  return {
    id: `id-${i}`,
    timestamp: "2026-11-23T17:00:00.000Z",
    action: "pull",
    target: { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: `sha256:${"a".repeat(64)}`, size: 790, length: 790, repository: "team/app", url: `http://r.example/v2/team/app/manifests/sha256:${"a".repeat(64)}`, tag: "v1", ...target },
    actor: { name: "alice" },
    source,
    request: { id: `req-${i}`, method: "GET", useragent: 'skopeo/1.13 "quoted" \u0001', host: "r.example" },
  };
}

describe("EventLines", () => {
  it("encodes an event as the bytes of its JSON on one line, without references unless asked for", () => {
    const push: RegistryEvent = { ...pull(1), action: "push", target: { ...pull(1).target, references: [{ digest: "sha256:c", size: 3 }] } };
    const plain = lineOf(new EventLines(false), push);
    expect(plain).not.toContain("\n");
    const { references: _r, ...target } = push.target;
    expect(plain).toBe(JSON.stringify({ ...push, target }));
    expect(lineOf(new EventLines(true), push)).toBe(JSON.stringify(push));
    const anonymous: RegistryEvent = { id: "x", timestamp: "t", action: "gc.completed", target: { report: { dryRun: false, blobs: 2 } }, actor: {}, source };
    expect(lineOf(new EventLines(false), anonymous)).toBe(JSON.stringify(anonymous));
    const proxied = { ...pull(2), request: { id: "r", method: "GET", useragent: "ua", addr: "10.0.0.7", host: "h" } };
    expect(lineOf(new EventLines(false), proxied)).toBe(JSON.stringify(proxied));
  });

  it("kept templates (target, actor, source, request fields) are reused only for equal values: a changed field, a number for a string, an extra field, another order each serialize afresh", () => {
    const lines = new EventLines(false);
    const variants: RegistryEvent[] = [
      pull(1),
      pull(2, { tag: "v2" }),
      pull(3, { tag: undefined }),
      pull(4, { size: 791 }),
      pull(5, { repository: "team/other" }),
      pull(6, { size: "790" as unknown as number }),
      pull(7, { fromRepository: "x" }),
      pull(8),
      { ...pull(9), target: { tag: "v1", ...pull(9).target } },
      { ...pull(10), action: "push" },
      { ...pull(11), source: { instanceID: "other" } },
    ];
    variants.push(
      { ...pull(11), actor: { name: "bob" } },
      { ...pull(12), actor: {} },
      { ...pull(13), request: { id: "r13", method: "GET", useragent: "other", host: "r.example" } },
      { ...pull(14), request: { id: "r14", method: "GET", useragent: "other", addr: "10.0.0.1", host: "r.example" } },
      { ...pull(15), request: { id: "r15", method: "GET", useragent: "other" } },
      { ...pull(16), request: { id: "r16", method: "HEAD", useragent: "other" } },
      pull(17),
    );
    for (const event of variants) expect(lineOf(lines, event)).toBe(JSON.stringify(event));
    // A target changed after it was encoded does not change what was kept.
    const moving = pull(18);
    lineOf(lines, moving);
    moving.target.tag = "moved";
    expect(lineOf(lines, pull(19))).toBe(JSON.stringify(pull(19)));
  });

  it("a frozen target seen again is found by identity: the same line as its JSON, and another action, actor or source still serializes afresh", () => {
    const lines = new EventLines(false);
    const frozen = Object.freeze({ ...pull(1).target });
    const withFrozen = (i: number, extra: Partial<RegistryEvent> = {}): RegistryEvent => ({ ...pull(i), target: frozen, ...extra });
    const sequence = [withFrozen(1), withFrozen(2), withFrozen(3, { action: "push" }), withFrozen(4, { actor: { name: "bob" } }), withFrozen(5, { source: { instanceID: "other" } }), withFrozen(6), pull(7, { tag: "v2" }), withFrozen(8)];
    for (const event of sequence) expect(lineOf(lines, event)).toBe(JSON.stringify(event));
    // A target that is not frozen is compared by its fields each time: changed in place, it gets its new line.
    const open = { ...pull(9).target };
    const first = { ...pull(9), target: open };
    expect(lineOf(lines, first)).toBe(JSON.stringify(first));
    open.tag = "moved";
    expect(lineOf(lines, first)).toBe(JSON.stringify(first));
    expect(lineOf(lines, first)).toContain('"tag":"moved"');
  });

  it("a new frozen target equal to a kept template's is found by identity from its second event on (its fields are not read again)", () => {
    const lines = new EventLines(false);
    // Two frozen targets with the same fields, as a pull's cache entry made again gives; reads of the second counted.
    const first = Object.freeze({ ...pull(1).target });
    let reads = 0;
    const second = new Proxy(Object.freeze({ ...pull(1).target }), {
      get(target, key, receiver) {
        reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    expect(Object.isFrozen(second)).toBe(true);
    const withTarget = (i: number, target: RegistryEvent["target"]): RegistryEvent => ({ ...pull(i), target });
    expect(lineOf(lines, withTarget(1, first))).toBe(JSON.stringify(withTarget(1, first)));
    expect(lineOf(lines, withTarget(2, second))).toBe(JSON.stringify(withTarget(2, first)));
    expect(reads).toBeGreaterThan(0);
    reads = 0;
    for (let i = 3; i < 6; i++) expect(lineOf(lines, withTarget(i, second))).toBe(JSON.stringify(withTarget(i, first)));
    expect(reads).toBe(0);
  });

  it("any sequence of events, built from templates or afresh, encodes to the bytes of JSON.stringify of each", () => {
    // Few distinct values, so that templates are hit; any string (quotes, control characters, non-ASCII) in each.
    const str = fc.oneof(fc.constantFrom("a", "team/app", "GET", "r.example"), fc.string({ unit: "binary", maxLength: 12 }));
    const num = fc.oneof(fc.constantFrom(0, 790), fc.integer());
    const sources = [source, { instanceID: "b", addr: "r:5000" }];
    const event = fc.record({
      id: str,
      timestamp: str,
      action: fc.constantFrom("pull", "push", "delete", "mount"),
      target: fc.record(
        { mediaType: str, digest: str, size: num, length: num, repository: str, url: str, tag: str, fromRepository: str, references: fc.array(fc.record({ digest: str, size: num }), { maxLength: 2 }) },
        { requiredKeys: [] },
      ),
      actor: fc.oneof(fc.constant({}), fc.record({ name: str })),
      source: fc.constantFrom(...sources),
      request: fc.option(fc.record({ id: str, method: str, useragent: str, addr: str, host: str }, { requiredKeys: ["id", "method", "useragent"] }), { nil: undefined }),
    }).map((e) => {
      const out = { ...e } as RegistryEvent;
      if (e.request === undefined) delete out.request;
      return out;
    });
    fc.assert(
      fc.property(fc.boolean(), fc.array(event, { minLength: 1, maxLength: 30 }), (includeReferences, events) => {
        const lines = new EventLines(includeReferences);
        for (const e of events) {
          const expected = includeReferences ? e : { ...e, target: Object.fromEntries(Object.entries(e.target).filter(([k]) => k !== "references")) };
          expect(lineOf(lines, e)).toBe(JSON.stringify(expected));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("EventLines.addParts (an event written from its parts, without an event object)", () => {
  const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const str = fc.oneof(fc.constantFrom("a", "team/app", "r.example", "skopeo/1.13"), fc.string({ unit: "binary", maxLength: 12 }));
  const num = fc.oneof(fc.constantFrom(0, 790), fc.integer());
  const sources = [source, { instanceID: "b", addr: "r:5000" }];
  // Header lines as a client may send them: any case, repeated, blank, absent.
  const headerName = fc.constantFrom("Host", "host", "HOST", "User-Agent", "user-agent", "X-Request-Id", "x-request-id", "X-Forwarded-For", "X-Real-Ip", "Accept", "Authorization");
  const request = fc.record({
    method: fc.constantFrom("GET", "HEAD", "get", "Put", "DELETE"),
    lines: fc.array(fc.tuple(headerName, fc.oneof(str, fc.constantFrom(" ", "", "10.0.0.1, 10.0.0.2", " spaced "))), { maxLength: 6 }),
  });

  it("any parts give a line that is its own JSON, with the event emitter's fields: fresh UUID ids, the request record of requestRecord", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(
          fc.record({
            action: fc.constantFrom("pull", "push", "delete", "mount"),
            target: fc.record({ mediaType: str, digest: str, size: num, length: num, repository: str, url: str, tag: str, references: fc.array(fc.record({ digest: str, size: num }), { maxLength: 2 }) }, { requiredKeys: [] }),
            actor: fc.option(str, { nil: undefined }),
            source: fc.constantFrom(...sources),
            request: fc.option(request, { nil: undefined }),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        (includeReferences, events) => {
          const lines = new EventLines(includeReferences);
          const seen = new Set<string>();
          for (const e of events) {
            // The Node adapter's light request: header lines as received (the path a registry behind node:http takes).
            const req = e.request && lightRequest({ method: e.request.method, url: "http://fallback.example:5000/v2/", pairs: e.request.lines.map(([n, v]) => [n, v]), signal: () => new AbortController().signal });
            const one = new PendingEvents();
            lines.addParts(one, e.action, e.target, e.actor, e.source, req && requestParts(req));
            const line = only(one);
            const parsed = JSON.parse(line) as RegistryEvent;
            // The line is the JSON of what it parses to (its own key order): the bytes JSON.stringify gives.
            expect(line).toBe(JSON.stringify(parsed));
            expect(parsed.id).toMatch(UUID_V8);
            expect(seen.has(parsed.id)).toBe(false);
            seen.add(parsed.id);
            expect(Number.isNaN(Date.parse(parsed.timestamp))).toBe(false);
            expect(parsed.timestamp).toBe(new Date(parsed.timestamp).toISOString());
            const target = includeReferences ? e.target : Object.fromEntries(Object.entries(e.target).filter(([k]) => k !== "references"));
            const expected: Record<string, unknown> = { id: parsed.id, timestamp: parsed.timestamp, action: e.action, target, actor: e.actor ? { name: e.actor } : {}, source: e.source };
            if (req) {
              const record = requestRecord(req);
              const given = requestParts(req).id;
              if (given !== undefined) expect(parsed.request!.id).toBe(given);
              else expect(parsed.request!.id).toMatch(UUID_V8);
              expected.request = { ...record, id: parsed.request!.id };
            }
            expect(line).toBe(JSON.stringify(expected));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("outbox objects and envelopes", () => {
  afterEach(() => vi.useRealTimers());
  it("pending events written as an object read back as their lines; an envelope of them parses to the events in order", () => {
    const lines = new EventLines(false);
    const pending = new PendingEvents();
    const events = Array.from({ length: 300 }, (_, i) => pull(i, { tag: `v${i % 7}` }));
    for (const event of events) lines.add(pending, event);
    expect(pending.count).toBe(300);
    const taken = pending.take().lines();
    expect(pending.count).toBe(0);
    expect(pending.size).toBe(0);
    expect(taken.starts.map((start, i) => text(taken.bytes.subarray(start, taken.ends[i])))).toEqual(events.map((e) => JSON.stringify(e)));
    const read = decodeLines(taken.bytes);
    expect(read.skipped).toBe(0);
    expect(read.starts).toEqual(taken.starts);
    expect(read.ends).toEqual(taken.ends);
    const body = JSON.parse(text(envelope([{ lines: read, from: 10, to: 20 }]))) as { events: RegistryEvent[] };
    expect(body.events).toEqual(events.slice(10, 20).map((e) => JSON.parse(JSON.stringify(e))));
    expect(JSON.parse(text(envelope([])))).toEqual({ events: [] });
  });

  it("an envelope joins ranges of several objects, and lines with gaps between them (skipped lines), in order", () => {
    const lines = new EventLines(false);
    const object = (from: number, to: number): ObjectLines => {
      const pending = new PendingEvents();
      for (let i = from; i < to; i++) lines.add(pending, pull(i));
      return pending.lines();
    };
    const damaged = new TextEncoder().encode(`${JSON.stringify(pull(50))}\nnot json\n${JSON.stringify(pull(51))}\n\n${JSON.stringify(pull(52))}`);
    const gaps = decodeLines(damaged);
    expect(gaps.skipped).toBe(1);
    const body = JSON.parse(text(envelope([{ lines: object(0, 5), from: 3, to: 5 }, { lines: gaps, from: 0, to: 3 }, { lines: object(60, 62), from: 0, to: 1 }]))) as { events: RegistryEvent[] };
    expect(body.events.map((e) => e.id)).toEqual(["id-3", "id-4", "id-50", "id-51", "id-52", "id-60"]);
  });

  it("reads an object of the earlier format (a JSON array), and leaves out lines that cannot be an event", () => {
    const ids = (read: ObjectLines): string[] => read.starts.map((start, i) => JSON.parse(text(read.bytes.subarray(start, read.ends[i]))).id);
    const earlier = new TextEncoder().encode(JSON.stringify([pull(1), pull(2)]));
    expect(ids(decodeLines(earlier))).toEqual(["id-1", "id-2"]);
    const damaged = new TextEncoder().encode(`${JSON.stringify(pull(1))}\n{"id":"trunc\n\n${JSON.stringify(pull(3))}\n`);
    const read = decodeLines(damaged);
    expect(read.skipped).toBe(1);
    expect(ids(read)).toEqual(["id-1", "id-3"]);
  });

  it("a run of events that repeat the line before (pulls of one client) is copied and patched: every line, in an object and in an envelope, is the line that event alone writes", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const targets = [
      { mediaType: "m", digest: "sha256:d", size: 1, length: 1, repository: "r", url: "http://h/v2/r/manifests/sha256:d", tag: "t" },
      { mediaType: "m", digest: "sha256:e", size: 22, length: 22, repository: "team/app", url: "http://h/v2/team/app/manifests/sha256:e" },
    ];
    const requests = [{ method: "GET", useragent: "ua", host: "h" }, { method: "HEAD", useragent: "skopeo/1.13", host: "h:5000", addr: "10.0.0.1" }];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            target: fc.constantFrom(0, 1),
            actor: fc.constantFrom(undefined, "alice"),
            // a request drawing its id, a client's request id, no request
            request: fc.constantFrom(0, 1, "client", undefined),
            // milliseconds to the next event; a jump past the year 9999 (a 27-byte timestamp) and back
            step: fc.oneof(fc.constantFrom(0, 0, 0, 1, 999), fc.constant(254_000_000_000_000), fc.constant(-254_000_000_000_000)),
            built: fc.boolean(),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        (events) => {
          const lines = new EventLines(false);
          const pending = new PendingEvents();
          let now = Date.UTC(2026, 10, 24, 12, 0, 0, 998);
          events.forEach((e, i) => {
            vi.setSystemTime((now = Math.max(0, now + e.step)));
            const request = e.request === undefined ? undefined : e.request === "client" ? { ...requests[0]!, id: `client-${i}` } : { ...requests[e.request as 0 | 1]!, id: undefined };
            if (e.built) lines.add(pending, { ...pull(i), target: targets[e.target]! });
            else lines.addParts(pending, "pull", targets[e.target]!, e.actor, source, request);
          });
          const alone = Array.from({ length: pending.count }, (_, i) => {
            const one = new PendingEvents();
            one.addCopy(pending, i);
            return only(one);
          });
          const object = pending.lines();
          expect(object.starts.map((start, i) => text(object.bytes.subarray(start, object.ends[i])))).toEqual(alone);
          expect(text(pending.envelope(0, pending.count))).toBe(`{"events":[${alone.join(",")}]}`);
          const from = Math.floor(pending.count / 3);
          expect(text(pending.envelope(from, pending.count))).toBe(`{"events":[${alone.slice(from).join(",")}]}`);
          for (const line of alone) expect(JSON.stringify(JSON.parse(line))).toBe(line);
          expect(new Set(alone.map((line) => (JSON.parse(line) as RegistryEvent).id)).size).toBe(alone.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("thousands of events from more clients and targets than it looks back over: the columns grow, takeFirst keeps the rest's parts, every line is the one that event alone writes", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2026, 10, 24, 12, 0, 0, 0));
    const lines = new EventLines(false);
    const pending = new PendingEvents();
    const targets = Array.from({ length: 20 }, (_, t) => ({ mediaType: "m", digest: `sha256:${t}`, size: t, length: t, repository: `r${t}`, url: `http://h/v2/r${t}/manifests/sha256:${t}` }));
    const json: string[] = [];
    const alone = (from: PendingEvents, i: number): string => {
      const one = new PendingEvents();
      one.addCopy(from, i);
      return only(one);
    };
    for (let i = 0; i < 3000; i++) {
      if (i % 7 === 0) vi.setSystemTime(Date.now() + 1);
      // 20 targets and 13 clients interleaved: most parts are not among the last few the list looks back over.
      const request = i % 5 === 4 ? undefined : { id: i % 3 === 0 ? `client-${i}` : undefined, method: "GET", useragent: `ua-${i % 13}`, host: "h" };
      if (i % 11 === 10) lines.add(pending, { ...pull(i), target: targets[i % 20]! });
      else lines.addParts(pending, "pull", targets[i % 20]!, i % 2 ? "alice" : undefined, source, request);
      json.push(alone(pending, pending.count - 1));
      // Each line is its own event's: its target, its client, its actor.
      const event = JSON.parse(json[i]!) as RegistryEvent;
      expect(event.target.digest).toBe(`sha256:${i % 20}`);
      if (i % 11 === 10) expect(event.request?.useragent).toBe(pull(i).request!.useragent);
      else {
        expect(event.request?.useragent).toBe(request?.useragent);
        expect(event.actor.name).toBe(i % 2 ? "alice" : undefined);
      }
    }
    const written = (list: PendingEvents): string[] => {
      const l = list.lines();
      return l.starts.map((start, i) => text(l.bytes.subarray(start, l.ends[i])));
    };
    expect(written(pending)).toEqual(json);
    const first = pending.takeFirst(1234);
    expect(written(first)).toEqual(json.slice(0, 1234));
    expect(written(pending)).toEqual(json.slice(1234));
    // The rest goes on growing after the take.
    for (let i = 0; i < 500; i++) lines.addParts(pending, "pull", targets[i % 20]!, undefined, source, { id: undefined, method: "GET", useragent: `ua-${i % 13}`, host: "h" });
    const rest = written(pending);
    expect(rest.slice(0, json.length - 1234)).toEqual(json.slice(1234));
    expect(rest.length).toBe(json.length - 1234 + 500);
    expect(new Set(rest.map((line) => (JSON.parse(line) as RegistryEvent).id)).size).toBe(rest.length);
    expect(text(pending.envelope(0, pending.count))).toBe(`{"events":[${rest.join(",")}]}`);
  });

  it("ids whose counters cross 2^24 (where a counter's two halves meet) are written as the id space spells them", () => {
    const lines = new EventLines(false);
    const pending = new PendingEvents();
    const target = { mediaType: "m", digest: "sha256:d", size: 1, length: 1, repository: "r", url: "http://h/v2/r/manifests/sha256:d" };
    while (takeId() < 2 ** 24 - 5);
    for (let i = 0; i < 6; i++) lines.addParts(pending, "pull", target, undefined, source, { id: undefined, method: "GET", useragent: "ua", host: "h" });
    const prefix = new TextDecoder().decode(idPrefix());
    const { bytes, starts, ends } = pending.lines();
    const events = starts.map((start, i) => JSON.parse(text(bytes.subarray(start, ends[i]))) as RegistryEvent);
    // Each event draws its id, then its request's: counters 2^24 - 4, -3; -2, -1; 2^24, +1; ...
    const spelled = (n: number) => prefix + n.toString(16).padStart(12, "0");
    expect(events.map((e) => [e.id, e.request!.id])).toEqual(Array.from({ length: 6 }, (_, i) => [spelled(2 ** 24 - 4 + 2 * i), spelled(2 ** 24 - 3 + 2 * i)]));
    expect(text(pending.envelope(0, 6))).toBe(`{"events":[${starts.map((start, i) => text(bytes.subarray(start, ends[i]))).join(",")}]}`);
  });

  it("takeFirst gives the first events and keeps the rest, in order; written twice, events give the same bytes", () => {
    const lines = new EventLines(false);
    const pending = new PendingEvents();
    const source = { instanceID: "instance" };
    const target = { mediaType: "m", digest: "sha256:d", size: 1, length: 1, repository: "r", url: "http://h/v2/r/manifests/sha256:d", tag: "t" };
    // Events made now (ids drawn), some with a client's request id, some without a request, and built ones.
    for (let i = 0; i < 40; i++) {
      if (i % 4 === 3) lines.add(pending, pull(i));
      else lines.addParts(pending, "pull", target, i % 2 ? "alice" : undefined, source, i % 4 === 2 ? undefined : { id: i % 4 === 1 ? `client-${i}` : undefined, method: "GET", useragent: "ua", host: "h" });
    }
    const all = pending.lines();
    const json = all.starts.map((start, i) => text(all.bytes.subarray(start, all.ends[i])));
    expect(new Set(json.map((line) => (JSON.parse(line) as RegistryEvent).id)).size).toBe(40);
    expect(text(pending.lines().bytes)).toBe(text(all.bytes)); // the same ids and times the second time
    const before = pending.since;
    const first = pending.takeFirst(10);
    expect(first.count).toBe(10);
    expect(pending.count).toBe(30);
    expect(pending.since).toBe(before); // the events kept count as old as the oldest taken
    const second = pending.takeFirst(5);
    const rest = pending.takeFirst(pending.count);
    expect(pending.count).toBe(0);
    expect(pending.size).toBe(0);
    const again = [first, second, rest].flatMap((taken) => {
      const l = taken.lines();
      return l.starts.map((start, i) => text(l.bytes.subarray(start, l.ends[i])));
    });
    expect(again).toEqual(json);
    // An envelope of a range is those lines, comma-separated, between `{"events":[` and `]}`.
    expect(text(rest.envelope(3, 9))).toBe(`{"events":[${json.slice(18, 24).join(",")}]}`);
    expect(text(rest.envelope(0, 0))).toBe('{"events":[]}');
    // A copy (another endpoint taking the event) is the same line.
    const copy = new PendingEvents();
    copy.addCopy(rest, 4);
    expect(text(copy.envelope(0, 1))).toBe(`{"events":[${json[19]}]}`);
    // The size bounds the bytes written, whatever the ids and timestamp hold (escaped, non-ASCII, lone
    // surrogates); the lines are those events' JSON.
    const sized = new PendingEvents();
    const odd = Array.from({ length: 6 }, (_, i) => {
      const e = pull(i, { tag: "é\u0000\"".repeat(i) });
      return { ...e, id: "\"\\é😀\u0001\ud800".repeat(i + 1), timestamp: "\u2028ü".repeat(i), request: { ...e.request!, id: "\udfff\n".repeat(i * 3) } };
    });
    for (const e of odd) lines.add(sized, e);
    const written = sized.lines();
    expect(sized.size).toBeGreaterThanOrEqual(written.bytes.length);
    expect(written.starts.map((start, i) => text(written.bytes.subarray(start, written.ends[i])))).toEqual(odd.map((e) => JSON.stringify(e)));
    expect(text(sized.envelope(0, odd.length))).toBe(`{"events":[${odd.map((e) => JSON.stringify(e)).join(",")}]}`);
  });
});
