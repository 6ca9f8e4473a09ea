/**
 * The base blob store: a blob's bytes are stored once (`blobData`), and a link
 * per repository makes it visible there (`layerLink`), as in Distribution.
 *
 * @module
 */
import type { Digest } from "../../../oci/digest.js";
import { RegistryError } from "../../../oci/errors.js";
import { parseRange } from "../../range.js";
import type { BlobContent, BlobInfo, BlobStore } from "../types.js";
import type { BaseContext } from "./context.js";
import { ensureRepository, exists, writeText } from "./storage-io.js";

/** The 404 `BLOB_UNKNOWN` of `digest`. */
export function blobUnknown(digest: Digest): RegistryError {
  return new RegistryError("BLOB_UNKNOWN", "blob unknown to registry", 404, { digest: digest.value });
}

/** The blob store over `ctx`. */
export function baseBlobs(ctx: BaseContext): BlobStore {
  const { storage, layout } = ctx;
  const stat = async (name: string, digest: Digest): Promise<BlobInfo | undefined> => {
    if (!(await exists(storage, layout.layerLink(name, digest)))) return undefined;
    const info = await storage.stat(layout.blobData(digest));
    return info && { digest, size: info.size };
  };
  return {
    stat,
    async read(name, digest, options) {
      if (options.redirect && storage.redirectURL) {
        // No stat: the driver's URL check already finds a missing blob (then undefined, and the read below says so).
        if (!(await exists(storage, layout.layerLink(name, digest)))) return undefined;
        const url = await storage.redirectURL(layout.blobData(digest), { expiresInSeconds: options.redirect.expiresInSeconds });
        if (url !== undefined) return { kind: "redirect", digest, url };
      }
      const info = await stat(name, digest);
      if (!info) return undefined;
      const range = parseRange(options.range ?? null, info.size);
      if (range.kind === "unsatisfiable") {
        throw new RegistryError("RANGE_INVALID", "requested range not satisfiable", 416, { size: info.size }, { "Content-Range": `bytes */${info.size}` });
      }
      if (range.kind === "full") {
        const body = await storage.read(layout.blobData(digest));
        return body && { kind: "bytes", ...info, body };
      }
      const body = await storage.read(layout.blobData(digest), { offset: range.start, length: range.end - range.start + 1 });
      const content: BlobContent | undefined = body && { kind: "bytes", ...info, body, range: { start: range.start, end: range.end } };
      return content;
    },
    async delete(name, digest) {
      const link = layout.layerLink(name, digest);
      if (!(await exists(storage, link))) throw blobUnknown(digest);
      await storage.delete(link);
    },
    /**
     * The source is checked again once the link is written: a garbage
     * collection that unlinked it meanwhile either lists the new link before
     * it deletes the bytes, or is seen here (docs/gc.md).
     */
    async mount(name, from, digest, _call, confirm) {
      const held = async () => (from === undefined || (await exists(storage, layout.layerLink(from, digest)))) && (await storage.stat(layout.blobData(digest)));
      const info = await held();
      if (!info || (confirm && !(await confirm()))) return undefined;
      const target = layout.layerLink(name, digest);
      const before = await exists(storage, target);
      await writeText(storage, target, digest.value);
      if (!(await held())) {
        if (!before) await storage.delete(target);
        return undefined;
      }
      return { digest, size: info.size, created: await ensureRepository(storage, name) };
    },
  };
}
