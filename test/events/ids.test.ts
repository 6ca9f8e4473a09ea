/**
 * Event and request ids: UUIDs (version 8) unique within a process, across
 * processes and across a restart (each a separate id space with its own
 * random prefix), and after the counter runs out.
 */
import { describe, expect, it } from "vitest";
import { IdSpace, counterInto, idPrefix, nextId, takeId } from "../../src/events/ids.js";

const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("event ids", () => {
  it("are version-8 UUIDs, all different within one id space, the counter in the last group", () => {
    const space = new IdSpace();
    const ids = Array.from({ length: 100_000 }, () => space.next());
    for (const id of [ids[0]!, ids[99_999]!, nextId()]) expect(id).toMatch(UUID_V8);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]!.slice(24)).toBe("000000000000");
    expect(ids[99_999]!.slice(24)).toBe((99_999).toString(16).padStart(12, "0"));
    expect(new Set(ids.map((id) => id.slice(0, 24))).size).toBe(1);
  });

  it("two id spaces (two processes on one store, or one process before and after a restart) share no id and no prefix", () => {
    const spaces = Array.from({ length: 50 }, () => new IdSpace());
    const ids = spaces.map((space) => Array.from({ length: 1000 }, () => space.next()));
    expect(new Set(ids.flat()).size).toBe(50 * 1000);
    expect(new Set(ids.map((of) => of[0]!.slice(0, 24))).size).toBe(50);
  });

  it("draws a new prefix when the counter runs out instead of repeating an id", () => {
    const space = new IdSpace(4);
    const ids = Array.from({ length: 12 }, () => space.next());
    expect(new Set(ids).size).toBe(12);
    expect(new Set(ids.map((id) => id.slice(0, 24))).size).toBe(3);
    for (const id of ids) expect(id).toMatch(UUID_V8);
  });

  it("taken as their parts (prefix and counter, for an outbox line) they are the ids `next` gives, in the same sequence", () => {
    const space = new IdSpace(6);
    const ascii = new TextDecoder("ascii");
    const out = new Uint8Array(12);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      if (i % 3 === 0) {
        const n = space.take();
        counterInto(out, 0, n);
        ids.push(ascii.decode(space.prefixBytes) + ascii.decode(out));
      } else {
        ids.push(space.next());
      }
    }
    for (const id of ids) expect(id).toMatch(UUID_V8);
    expect(new Set(ids).size).toBe(20);
    // Counters 0..5 under each prefix, in order, whichever way each id was made.
    expect(ids.map((id) => parseInt(id.slice(24), 16))).toEqual(Array.from({ length: 20 }, (_, i) => i % 6));
    const taken = takeId();
    const after = nextId();
    expect(ascii.decode(idPrefix())).toBe(after.slice(0, 24));
    expect(parseInt(after.slice(24), 16)).toBe(taken + 1);
  });

  it("writes every counter up to 2^48 - 1 as the 12 hex digits of toString(16)", () => {
    const out = new Uint8Array(12);
    const ascii = new TextDecoder("ascii");
    for (const n of [0, 1, 15, 16, 255, 0xffffff, 0x1000000, 0x1000001, 0xabcdef123456, 2 ** 32, 2 ** 32 - 1, 2 ** 48 - 1, 123456789012345]) {
      expect(counterInto(out, 0, n)).toBe(12);
      expect(ascii.decode(out)).toBe(n.toString(16).padStart(12, "0"));
    }
  });
});
