/**
 * The repositories page's "next" cursor, sealed: AES-GCM over the last catalog
 * name a page scanned, with a key derived from the session secret. The name
 * may be one the viewer may not see (a page that scans its limit without
 * filling stops on whatever came last), so the link must not carry it in
 * the clear (issue 41, item 9); the page that opens the cursor shows only
 * names the viewer may pull, as every page does.
 *
 * @module
 */
import { b64url, fromB64url, fromUtf8, toArrayBuffer, utf8 } from "../util/bytes.js";

/** Seals and opens paging cursors with one key. */
export interface CursorSealer {
  /** An opaque cursor naming `name`. */
  seal(name: string): Promise<string>;
  /** The name in `cursor`; a `TypeError` (answered 400) for one this sealer did not make. */
  open(cursor: string): Promise<string>;
}

const IV_BYTES = 12;

/** A {@link CursorSealer} keyed by `secret` (the session secret; a label keeps the keys apart). */
export function cursorSealer(secret: Uint8Array): CursorSealer {
  const key = (async () => {
    const hmac = await crypto.subtle.importKey("raw", toArrayBuffer(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const raw = await crypto.subtle.sign("HMAC", hmac, toArrayBuffer(utf8("registry-kit ui paging cursor v1")));
    return crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
  })();
  return {
    async seal(name) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await key, toArrayBuffer(utf8(name))));
      const out = new Uint8Array(IV_BYTES + sealed.byteLength);
      out.set(iv);
      out.set(sealed, IV_BYTES);
      return b64url(out);
    },
    async open(cursor) {
      try {
        if (cursor.length > 1024) throw new RangeError("too long");
        const bytes = fromB64url(cursor);
        const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: toArrayBuffer(bytes.subarray(0, IV_BYTES)) }, await key, toArrayBuffer(bytes.subarray(IV_BYTES)));
        return fromUtf8(new Uint8Array(plain));
      } catch {
        throw new TypeError("invalid page cursor");
      }
    },
  };
}
