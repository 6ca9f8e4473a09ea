/**
 * An OCI image layout directory as a {@link LocalImageStore} (Node only):
 * `oci-layout`, `index.json`, and `blobs/<alg>/<hex>`. Blobs are written to a
 * temporary file and renamed into place only when the stream ended cleanly
 * (the client's stream errors on a digest mismatch), so a failed download
 * leaves nothing behind. skopeo reads and writes the same layout (`oci:DIR:TAG`).
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Descriptor, LocalImageStore } from "./local-store.js";

const NAME_ANNOTATION = "org.opencontainers.image.ref.name";

interface IndexJson {
  schemaVersion: 2;
  mediaType?: string;
  manifests: Descriptor[];
}

/** Open (creating when needed) an OCI image layout directory. */
export function ociLayoutStore(dir: string): LocalImageStore {
  const blobPath = (digest: string) => {
    const match = /^(sha256|sha512):([a-f0-9]{64}|[a-f0-9]{128})$/.exec(digest);
    if (!match) throw new TypeError(`invalid digest ${JSON.stringify(digest)}`);
    return join(dir, "blobs", match[1]!, match[2]!);
  };
  const ready = (async () => {
    await mkdir(join(dir, "blobs"), { recursive: true });
    await writeFile(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  })();
  let indexLock: Promise<unknown> = Promise.resolve();

  async function readIndex(): Promise<IndexJson> {
    try {
      return JSON.parse(await readFile(join(dir, "index.json"), "utf8")) as IndexJson;
    } catch {
      return { schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: [] };
    }
  }

  return {
    async hasBlob(digest) {
      await ready;
      return (await stat(blobPath(digest)).catch(() => undefined))?.isFile() ?? false;
    },
    async blobSize(digest) {
      await ready;
      return (await stat(blobPath(digest)).catch(() => undefined))?.size;
    },
    async putBlob(digest, data) {
      await ready;
      const final = blobPath(digest);
      await mkdir(join(final, ".."), { recursive: true });
      const temp = `${final}.${randomUUID()}.tmp`;
      try {
        await pipeline(Readable.fromWeb(data as import("node:stream/web").ReadableStream<Uint8Array>), createWriteStream(temp, { highWaterMark: 1 << 20 }));
        await rename(temp, final);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
    },
    async getBlob(digest, offset = 0) {
      await ready;
      const path = blobPath(digest);
      if (!(await stat(path).catch(() => undefined))) return undefined;
      return Readable.toWeb(createReadStream(path, { start: offset, highWaterMark: 1 << 20 })) as ReadableStream<Uint8Array>;
    },
    async setName(name, manifest) {
      await ready;
      const update = indexLock.then(async () => {
        const index = await readIndex();
        index.manifests = index.manifests.filter((m) => m.annotations?.[NAME_ANNOTATION] !== name);
        index.manifests.push({ ...manifest, annotations: { ...manifest.annotations, [NAME_ANNOTATION]: name } });
        const temp = join(dir, `index.json.${randomUUID()}.tmp`);
        await writeFile(temp, JSON.stringify(index));
        await rename(temp, join(dir, "index.json"));
      });
      indexLock = update.catch(() => {});
      await update;
    },
    async resolveName(name) {
      await ready;
      const found = (await readIndex()).manifests.find((m) => m.annotations?.[NAME_ANNOTATION] === name);
      if (!found) return undefined;
      const { annotations: _, ...descriptor } = found;
      return descriptor;
    },
  };
}
