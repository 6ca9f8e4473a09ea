/**
 * Event and request ids: UUIDs (version 8) unique within a process, across
 * processes and across a restart (each a separate id space with its own
 * random prefix), and after the counter runs out.
 */
import { describe, expect, it } from "vitest";
import { IdSpace, nextId } from "../../src/events/ids.js";

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
});
