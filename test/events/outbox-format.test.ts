/**
 * The outbox's bytes: an event's line is its JSON (references only when asked
 * for), kept target JSON never stands for another target, stored objects
 * (current and earlier format) read back into lines, and an envelope of lines
 * parses to the events.
 */
import { describe, expect, it } from "vitest";
import type { RegistryEvent } from "../../src/events/index.js";
import { EventLines, LineBuffer, decodeLines, envelope } from "../../src/events/outbox-format.js";

const source = { instanceID: "3f1c2a9e-0b7d-4c55-9e61-2d8f0a6b7c11" };
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
  it("serializes an event to its JSON on one line, without references unless asked for", () => {
    const push: RegistryEvent = { ...pull(1), action: "push", target: { ...pull(1).target, references: [{ digest: "sha256:c", size: 3 }] } };
    const plain = new EventLines(false).line(push);
    expect(plain).not.toContain("\n");
    const { references: _r, ...target } = push.target;
    expect(JSON.parse(plain)).toEqual({ ...push, target });
    expect(JSON.parse(new EventLines(true).line(push))).toEqual(push);
    const anonymous: RegistryEvent = { id: "x", timestamp: "t", action: "gc.completed", target: { report: { dryRun: false, blobs: 2 } }, actor: {}, source };
    expect(JSON.parse(new EventLines(false).line(anonymous))).toEqual(anonymous);
    const proxied = { ...pull(2), request: { id: "r", method: "GET", useragent: "ua", addr: "10.0.0.7", host: "h" } };
    expect(JSON.parse(new EventLines(false).line(proxied))).toEqual(proxied);
  });

  it("kept JSON (target, actor, request fields) is reused only for equal values: a changed field, a number for a string, or an extra field each serialize afresh", () => {
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
    ];
    variants.push(
      { ...pull(11), actor: { name: "bob" } },
      { ...pull(12), actor: {} },
      { ...pull(13), request: { id: "r13", method: "GET", useragent: "other", host: "r.example" } },
      { ...pull(14), request: { id: "r14", method: "GET", useragent: "other", addr: "10.0.0.1", host: "r.example" } },
      { ...pull(15), request: { id: "r15", method: "GET", useragent: "other" } },
      pull(16),
    );
    for (const event of variants) expect(JSON.parse(lines.line(event))).toEqual(JSON.parse(JSON.stringify(event)));
    // A target changed after it was serialized does not change what was kept.
    const moving = pull(9);
    lines.line(moving);
    moving.target.tag = "moved";
    expect(JSON.parse(lines.line(pull(10))).target.tag).toBe("v1");
  });
});

describe("outbox objects and envelopes", () => {
  it("a line buffer's bytes read back as its lines; an envelope of them parses to the events in order", () => {
    const lines = new EventLines(false);
    const buffer = new LineBuffer();
    const events = Array.from({ length: 300 }, (_, i) => pull(i, { tag: `v${i % 7}` }));
    for (const event of events) buffer.push(lines.line(event));
    expect(buffer.count).toBe(300);
    const bytes = buffer.take();
    expect(buffer.count).toBe(0);
    const read = decodeLines(bytes);
    expect(read.skipped).toBe(0);
    expect(read.lines).toHaveLength(300);
    const body = JSON.parse(new TextDecoder().decode(envelope(read.lines.slice(10, 20)))) as { events: RegistryEvent[] };
    expect(body.events.map((e) => e.id)).toEqual(events.slice(10, 20).map((e) => e.id));
    expect(JSON.parse(new TextDecoder().decode(envelope([])))).toEqual({ events: [] });
  });

  it("reads an object of the earlier format (a JSON array), and leaves out lines that cannot be an event", () => {
    const earlier = new TextEncoder().encode(JSON.stringify([pull(1), pull(2)]));
    expect(decodeLines(earlier).lines.map((l) => JSON.parse(new TextDecoder().decode(l)).id)).toEqual(["id-1", "id-2"]);
    const damaged = new TextEncoder().encode(`${JSON.stringify(pull(1))}\n{"id":"trunc\n\n${JSON.stringify(pull(3))}\n`);
    const read = decodeLines(damaged);
    expect(read.skipped).toBe(1);
    expect(read.lines.map((l) => JSON.parse(new TextDecoder().decode(l)).id)).toEqual(["id-1", "id-3"]);
  });
});
