/**
 * The verify cases every storage driver must pass (memory and fs in
 * verify.test.ts, S3 in verify-s3.test.ts): corrupt bytes planted straight
 * into storage are found, quarantined, no longer served, and repaired by a
 * re-push; good blobs are never flagged; a dry run changes nothing.
 */
import { describe, expect, it } from "vitest";
import { createRegistry, verifyBlobs } from "../../src/registry/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { readAll } from "../../src/util/streams.js";
import { bytes, errorCode, pushImage, req, sha256, sha512, type Handler } from "./helpers.js";

/** The key the registry stores a blob's bytes under (docs/registry.md, storage keys). */
export function dataKey(digest: string): string {
  const [algorithm, hex] = digest.split(":") as [string, string];
  return `blobs/${algorithm}/${hex.slice(0, 2)}/${hex}/data`;
}

/** Every key under the registry's top-level prefixes, with its bytes as text. */
export async function snapshot(storage: StorageDriver): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const prefix of ["blobs", "repositories", "catalog", "quarantine"]) {
    for (const key of (await storage.list(prefix)).keys) {
      const stream = await storage.read(key);
      out.set(key, stream ? new TextDecoder().decode(await readAll(stream, 1 << 20, () => new Error("too big"))) : "<gone>");
    }
  }
  return out;
}

/** Bytes of `key` as text, or undefined. */
export async function text(storage: StorageDriver, key: string): Promise<string | undefined> {
  const stream = await storage.read(key);
  return stream && new TextDecoder().decode(await readAll(stream, 1 << 20, () => new Error("too big")));
}

/** Push `content` into `name` with a single POST `?digest=` (sha256 or sha512). */
export async function pushAs(registry: Handler, name: string, content: string, algorithm: "sha256" | "sha512" = "sha256"): Promise<string> {
  const digest = algorithm === "sha256" ? sha256(content) : sha512(content);
  const res = await registry(req("POST", `/v2/${name}/blobs/uploads/?digest=${digest}`, { body: bytes(content) }));
  if (res.status !== 201) throw new Error(`push ${res.status} ${await res.text()}`);
  return digest;
}

/** Replace the stored bytes of `digest` with `corrupt`, as bit rot or a bad disk would. */
export async function corrupt(storage: StorageDriver, digest: string, content: string): Promise<void> {
  await storage.write(dataKey(digest), bytes(content));
}

/** A fresh storage for one test, and how to clean it up. */
export type OpenStorage = () => Promise<{ storage: StorageDriver; cleanup?: () => Promise<void> }>;

/** Register the driver-independent verify cases for `label`. */
export function describeVerifyCases(label: string, open: OpenStorage): void {
  const setup = async () => {
    const { storage, cleanup } = await open();
    // Blob GETs served by the registry itself (not redirected to S3): these cases read the bytes back.
    const registry = createRegistry({ storage, uploadSecret: "verify-test", redirect: false });
    return { storage, registry, cleanup: cleanup ?? (async () => {}) };
  };

  describe(`verifyBlobs on ${label}`, () => {
    it("reports a blob whose bytes do not hash to its name, flags none of the good ones, and changes nothing without quarantine", async () => {
      const { storage, registry, cleanup } = await setup();
      try {
        await pushImage(registry, "app", "v1");
        const rotten = await pushAs(registry, "app", "layer that will rot");
        await corrupt(storage, rotten, "layer that will rOt");
        const before = await snapshot(storage);

        const report = await verifyBlobs(storage);

        // config, layer, manifest and the rotten blob
        expect(report.checked).toBe(4);
        const sizes = await Promise.all([...before.keys()].filter((k) => k.startsWith("blobs/")).map(async (k) => (await storage.stat(k))!.size));
        expect(sizes).toHaveLength(4);
        expect(report.bytes).toBe(sizes.reduce((a, b) => a + b, 0));
        expect(report.mismatches).toEqual([{ digest: rotten, actualDigest: sha256("layer that will rOt"), size: 19 }]);
        expect(report.quarantined).toBe(0);
        expect(report.errors).toEqual([]);
        expect(await snapshot(storage)).toEqual(before);
      } finally {
        await cleanup();
      }
    });

    it("with quarantine: moves the corrupt bytes under quarantine/, GET answers 404 BLOB_UNKNOWN, and a re-push of the right bytes is served again", async () => {
      const { storage, registry, cleanup } = await setup();
      try {
        const image = await pushImage(registry, "app", "v1");
        await corrupt(storage, image.layer, "garbage");
        const at = new Date(Date.UTC(2031, 4, 6, 7, 8, 9, 123));

        const report = await verifyBlobs(storage, { quarantine: true, now: () => at });

        expect(report.quarantined).toBe(1);
        expect(report.mismatches).toHaveLength(1);
        const [mismatch] = report.mismatches;
        expect(mismatch).toMatchObject({ digest: image.layer, actualDigest: sha256("garbage"), size: 7 });
        const hex = image.layer.slice("sha256:".length);
        expect(mismatch!.quarantinedAs).toMatch(new RegExp(`^quarantine/sha256/${hex}/20310506T070809\\.123Z-[0-9a-f]{8}/data$`));
        expect(await text(storage, mismatch!.quarantinedAs!)).toBe("garbage");
        const info = JSON.parse((await text(storage, mismatch!.quarantinedAs!.replace(/data$/, "info")))!) as Record<string, unknown>;
        expect(info).toEqual({
          digest: image.layer, actualDigest: sha256("garbage"), size: 7, from: dataKey(image.layer), quarantinedAt: at.toISOString(),
        });
        expect(await storage.stat(dataKey(image.layer))).toBeUndefined();

        const gone = await registry(req("GET", `/v2/app/blobs/${image.layer}`));
        expect(gone.status).toBe(404);
        expect(await errorCode(gone)).toBe("BLOB_UNKNOWN");
        expect((await registry(req("HEAD", `/v2/app/blobs/${image.layer}`))).status).toBe(404);
        // the good blobs are still served
        expect((await registry(req("GET", `/v2/app/blobs/${image.config}`))).status).toBe(200);

        expect(await pushAs(registry, "app", "layer-bytes-x")).toBe(image.layer);
        const back = await registry(req("GET", `/v2/app/blobs/${image.layer}`));
        expect(back.status).toBe(200);
        expect(await back.text()).toBe("layer-bytes-x");

        const again = await verifyBlobs(storage, { quarantine: true });
        expect(again.mismatches).toEqual([]);
        expect(again.checked).toBe(3);
        // the quarantined copy stays for the operator
        expect(await text(storage, mismatch!.quarantinedAs!)).toBe("garbage");
      } finally {
        await cleanup();
      }
    });

    it("verifies sha512 blobs: a good one passes, a corrupt one is reported with its sha512 and quarantined", async () => {
      const { storage, registry, cleanup } = await setup();
      try {
        const good = await pushAs(registry, "app", "a sha512 blob", "sha512");
        const bad = await pushAs(registry, "app", "another sha512 blob", "sha512");
        await corrupt(storage, bad, "another sha512 blob, changed");

        const report = await verifyBlobs(storage, { quarantine: true });

        expect(report.checked).toBe(2);
        expect(report.mismatches).toEqual([{
          digest: bad, actualDigest: sha512("another sha512 blob, changed"), size: 28, quarantinedAs: expect.stringMatching(/^quarantine\/sha512\//),
        }]);
        expect((await registry(req("GET", `/v2/app/blobs/${bad}`))).status).toBe(404);
        const served = await registry(req("GET", `/v2/app/blobs/${good}`));
        expect(await served.text()).toBe("a sha512 blob");
      } finally {
        await cleanup();
      }
    });

    it("dryRun with quarantine reports the mismatch and changes no key", async () => {
      const { storage, registry, cleanup } = await setup();
      try {
        const image = await pushImage(registry, "app", "v1");
        await corrupt(storage, image.config, "{}");
        const before = await snapshot(storage);

        const report = await verifyBlobs(storage, { quarantine: true, dryRun: true });

        expect(report.dryRun).toBe(true);
        expect(report.mismatches).toEqual([{ digest: image.config, actualDigest: sha256("{}"), size: 2 }]);
        expect(report.quarantined).toBe(0);
        expect(await snapshot(storage)).toEqual(before);
      } finally {
        await cleanup();
      }
    });
  });
}
