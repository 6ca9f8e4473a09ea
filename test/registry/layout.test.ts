/**
 * `parseKey` is the inverse of every key builder in layout.ts: for generated
 * valid parts, parsing a built key gives the parts back; prefixes and keys the
 * registry never writes come back as `unknown`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as layout from "../../src/registry/stores/base/layout.js";
import { parseKey } from "../../src/registry/stores/base/layout.js";

type Digest = Parameters<typeof layout.blobData>[0];

const hexOf = (n: number) => fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: n, maxLength: n });
const digest: fc.Arbitrary<Digest> = fc.oneof(
  hexOf(64).map((hex): Digest => ({ algorithm: "sha256", hex, value: `sha256:${hex}` })),
  hexOf(128).map((hex): Digest => ({ algorithm: "sha512", hex, value: `sha512:${hex}` })),
);
// The distribution-spec name grammar (names.ts), components joined by `/`, at most 255 characters.
const component = fc.stringMatching(/^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/);
const name = fc.array(component, { minLength: 1, maxLength: 6 }).map((c) => c.join("/")).filter((n) => n.length <= 255);
const tag = fc.stringMatching(/^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/);
const uuid = fc.uuid();
const caller = fc.oneof(hexOf(64), fc.constant("anonymous"));
// As verify.ts makes them: compact UTC time and 8 hex digits.
const stamp = fc.tuple(fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }), hexOf(8))
  .map(([at, random]) => `${at.toISOString().replace(/[-:]/g, "")}-${random}`);

/** Every key builder, with generated parts and what `parseKey` must return. */
const builtKeys = fc.oneof(
  digest.map((d) => [layout.blobData(d), { kind: "blobData", digest: d }] as const),
  fc.tuple(name, digest).map(([n, d]) => [layout.layerLink(n, d), { kind: "layerLink", name: n, digest: d }] as const),
  fc.tuple(name, digest).map(([n, d]) => [layout.manifestRevision(n, d), { kind: "manifestRevision", name: n, digest: d }] as const),
  fc.tuple(name, tag).map(([n, t]) => [layout.tagLink(n, t), { kind: "tagLink", name: n, tag: t }] as const),
  fc.tuple(name, digest, digest).map(([n, s, m]) => [layout.referrer(n, s, m), { kind: "referrer", name: n, subject: s, manifest: m }] as const),
  fc.tuple(name, uuid).map(([n, u]) => [layout.uploadData(n, u), { kind: "uploadData", name: n, uuid: u }] as const),
  fc.tuple(caller, uuid).map(([c, u]) => [layout.callerUpload(c, u), { kind: "callerUpload", caller: c, uuid: u }] as const),
  name.map((n) => [layout.catalogEntry(n), { kind: "catalogEntry", name: n }] as const),
  fc.tuple(digest, stamp).map(([d, s]) => [layout.quarantineData(d, s), { kind: "quarantineData", digest: d, stamp: s }] as const),
  fc.tuple(digest, stamp).map(([d, s]) => [layout.quarantineInfo(d, s), { kind: "quarantineInfo", digest: d, stamp: s }] as const),
);

/** Every prefix builder: a folder, never the key of an object. */
const prefixes = fc.oneof(
  name.map(layout.tagsPrefix),
  fc.tuple(name, digest).map(([n, d]) => layout.referrersPrefix(n, d)),
  name.map(layout.uploadsPrefix),
  fc.tuple(name, uuid).map(([n, u]) => layout.uploadDir(n, u)),
  caller.map(layout.callerUploadsPrefix),
  fc.tuple(digest, stamp).map(([d, s]) => layout.quarantineDir(d, s)),
  fc.constantFrom(layout.UPLOADS_INDEX, layout.CATALOG_PREFIX, layout.QUARANTINE_PREFIX, "blobs", "repositories"),
);

describe("parseKey", () => {
  it("gives back the parts of every key a builder makes", () => {
    fc.assert(fc.property(builtKeys, ([key, parts]) => {
      expect(parseKey(key)).toEqual(parts);
    }), { numRuns: 2000 });
  });

  it("reads each catalog marker back, also names long enough to be split over several segments", () => {
    const long = `${"a".repeat(120)}/${"b".repeat(134)}`;
    expect(layout.catalogEntry(long).split("/").length).toBeGreaterThan(2);
    expect(parseKey(layout.catalogEntry(long))).toEqual({ kind: "catalogEntry", name: long });
  });

  it("says unknown for every prefix (folders, not objects)", () => {
    fc.assert(fc.property(prefixes, (key) => {
      expect(parseKey(key)).toEqual({ kind: "unknown", key });
    }));
  });

  it("says unknown for a built key with a segment added or taken away", () => {
    fc.assert(fc.property(builtKeys, fc.constantFrom("x", "data", "_layers", "0"), ([key], extra) => {
      for (const other of [`${key}/${extra}`, `${extra}/${key}`, key.slice(0, key.lastIndexOf("/"))]) {
        expect(parseKey(other)).toEqual({ kind: "unknown", key: other });
      }
    }));
  });

  it("says unknown for keys the registry does not write", () => {
    const d = "a".repeat(64);
    const uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
    for (const key of [
      "",
      "/",
      "blobs",
      `blobs/sha256/ab/${d}/data`, // wrong fan-out folder
      `blobs/sha256/aa/${d}/data/`,
      `blobs/sha256/aa/${"A".repeat(64)}/data`, // upper-case hex
      `blobs/md5/aa/${"a".repeat(32)}/data`, // unsupported algorithm
      `blobs/sha256/aa/${d.slice(1)}/data`, // short hex
      `repositories/_layers/sha256/${d}`, // no name
      `repositories/App/_layers/sha256/${d}`, // name outside the grammar
      `repositories/app//_layers/sha256/${d}`,
      `repositories/app/_layers/sha256/${d}/x`,
      `repositories/app/_blobs/sha256/${d}`, // no such kind
      `repositories/app/_manifests/tags/-bad`, // tag outside the grammar
      `repositories/app/_manifests/revisions/sha256/${d}/link`,
      `repositories/app/_referrers/sha256/${d}/not-a-digest`,
      `repositories/app/_uploads/not-a-uuid/data`,
      `repositories/app/_uploads/${uuid}/startedat`,
      `uploads/callers/someone/${uuid}`, // caller is neither a SHA-256 hex nor anonymous
      `uploads/callers/anonymous/${uuid}/x`,
      `uploads/other/anonymous/${uuid}`,
      "catalog/6", // odd hex
      "catalog/4150500", // upper-case name
      "catalog/61+/70", // split where catalogEntry does not split
      "catalog/zz",
      "catalog/ff", // a byte no name has (and not UTF-8)
      "catalog/c3a9", // UTF-8 "é": names are ASCII
      `quarantine/sha256/${d}/stamp/other`,
      `quarantine/sha256/${d}/a b/data`,
      "users/alice.json",
    ]) {
      expect(parseKey(key), key).toEqual({ kind: "unknown", key });
    }
  });

  it("says unknown for arbitrary strings outside the registry's folders", () => {
    const tops = new Set(["blobs", "repositories", "uploads", "catalog", "quarantine"]);
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (key) => {
      fc.pre(!tops.has(key.split("/")[0] ?? ""));
      expect(parseKey(key)).toEqual({ kind: "unknown", key });
    }));
  });
});
