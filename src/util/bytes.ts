/**
 * Byte and text encodings, one implementation of each for the whole library:
 * UTF-8, hex, standard base64 (`x5c`, PEM bodies) and base64url (JWS parts,
 * upload state).
 *
 * @module
 */
import { base64, base64url } from "rfc4648";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Decode UTF-8 bytes; throws on invalid sequences. */
export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Lowercase hex of `bytes`, two characters a byte. */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX_BYTE[bytes[i]!];
  return out;
}

const HEX_CHARS = /^(?:[0-9a-fA-F]{2})*$/;

/** Decode hex (either case, even length); throws on anything else. */
export function fromHex(hex: string): Uint8Array {
  if (!HEX_CHARS.test(hex)) throw new Error("invalid hex");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** A `Buffer`, as far as this module uses one. */
interface NativeBytes extends Uint8Array {
  write(text: string, offset: number, encoding: "utf8" | "latin1"): number;
  toString(encoding?: "base64url", start?: number, end?: number): string;
  subarray(start: number, end: number): NativeBytes;
}

interface BufferLike {
  isBuffer(value: unknown): boolean;
  allocUnsafe(size: number): NativeBytes;
  from(data: ArrayBufferLike, offset: number, length: number): NativeBytes;
  from(data: string, encoding: "utf8"): NativeBytes;
  from(data: string, encoding: "latin1"): Uint8Array;
}

/** The runtime's `Buffer` (Node, Bun) when it has one: its base64url is native code, several times faster. */
const NativeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

/** base64url without padding (RFC 7515 §2). */
export function b64url(bytes: Uint8Array): string {
  // A Buffer already (node:crypto's signatures) is encoded as it is: no view made for it (~45 ns a token).
  if (NativeBuffer) return (NativeBuffer.isBuffer(bytes) ? (bytes as unknown as { toString(encoding: "base64url"): string }) : NativeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString("base64url");
  return base64url.stringify(bytes, { pad: false });
}

/**
 * The bytes of a string known to be ASCII (base64url, JWS signing input):
 * one byte a character, copied natively where the runtime has `Buffer`.
 * For any other text use {@link utf8}.
 */
export function asciiBytes(text: string): Uint8Array {
  return NativeBuffer ? NativeBuffer.from(text, "latin1") : encoder.encode(text);
}

/** base64url (unpadded) of the UTF-8 bytes of `text`. */
export function b64urlText(text: string): string {
  if (NativeBuffer) {
    // Encoded through the scratch buffer: no Buffer object made for bytes that only become a string.
    const buffer = scratch(text.length * 3);
    if (buffer) return buffer.toString("base64url", 0, buffer.write(text, 0, "utf8"));
    return NativeBuffer.from(text, "utf8").toString("base64url");
  }
  return b64url(utf8(text));
}

/**
 * The bytes of a string known to be ASCII, like {@link asciiBytes}, but in a
 * buffer this module reuses where the runtime has `Buffer`: valid only until
 * the next call into this module. For a caller that hands them on at once
 * (a JWS signing input to a synchronous `sign()`) and copies them to keep them.
 */
export function scratchAsciiBytes(text: string): Uint8Array {
  const buffer = NativeBuffer ? scratch(text.length) : undefined;
  return buffer ? buffer.subarray(0, buffer.write(text, 0, "latin1")) : asciiBytes(text);
}

/** Largest scratch buffer kept: a token's signing input is a few hundred bytes, with an `x5c` chain a few KiB. */
const SCRATCH_LIMIT = 64 * 1024;
let scratchBuffer: NativeBytes | undefined;

/** The reused buffer, at least `size` bytes; `undefined` above {@link SCRATCH_LIMIT} (the caller allocates). */
function scratch(size: number): NativeBytes | undefined {
  if (size > SCRATCH_LIMIT) return undefined;
  if (!scratchBuffer || scratchBuffer.length < size) scratchBuffer = NativeBuffer!.allocUnsafe(Math.max(size, 4096));
  return scratchBuffer;
}

const B64URL_CHARS = /^[A-Za-z0-9_-]*$/;

/** Decode unpadded base64url; throws on padding or any character outside the alphabet. */
export function fromB64url(text: string): Uint8Array {
  if (!B64URL_CHARS.test(text)) throw new Error("invalid base64url");
  return base64url.parse(text, { loose: true });
}

/** Standard base64 with padding. */
export function b64(bytes: ArrayLike<number>): string {
  return base64.stringify(bytes);
}

/** Decode standard base64 (whitespace is not allowed; padding optional). */
export function fromB64(text: string): Uint8Array {
  return base64.parse(text, { loose: true });
}

/** The chunks one after another in one new array; `size` is their total length when the caller has counted it. */
export function concatBytes(chunks: readonly Uint8Array[], size = chunks.reduce((n, c) => n + c.byteLength, 0)): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** A fresh `Uint8Array` view as an `ArrayBuffer`-backed copy, for WebCrypto calls. */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? bytes.buffer
    : // Uint8Array's own slice copies; a Node Buffer's `slice` would be a view of the whole pool.
      (Uint8Array.prototype.slice.call(bytes).buffer as ArrayBuffer);
}

/** Constant-time comparison of two byte strings of possibly different length. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
