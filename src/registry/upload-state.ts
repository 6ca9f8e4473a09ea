/**
 * The signed `_state` query parameter of an upload URL (docs/architecture.md rule 5).
 *
 * It carries what a process needs to continue an upload that another process
 * started: repository, upload id, the offset the client has reached, the start
 * time, and (when one request sent every byte so far) the digest of those bytes,
 * so the final PUT need not re-read them. It is `base64url(JSON payload) "."
 * base64url(HMAC-SHA256(payload))`; any process with the same secret accepts it,
 * and a client cannot forge or alter it.
 *
 * @module
 */
import { b64url, fromB64url } from "../util/bytes.js";
import { RegistryError } from "../oci/errors.js";

/** What `_state` binds. */
export interface UploadState {
  name: string;
  uuid: string;
  /** Bytes received so far. */
  offset: number;
  /** Start of the upload, ms since the epoch. */
  startedAt: number;
  /** `sha256:<hex>` of bytes `[0, offset)`, when known without re-reading them. */
  digest?: string;
  /** SHA-256 hex of the caller who started the upload, when identified (per-caller limits). */
  owner?: string;
}

/** Signs and verifies `_state` values. */
export interface UploadStateCodec {
  sign(state: UploadState): Promise<string>;
  /** Verify `token` for this repository and upload; throws `BLOB_UPLOAD_INVALID` (400). */
  verify(token: string | null, name: string, uuid: string): Promise<UploadState>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Build a codec from the HMAC secret. */
export function uploadStateCodec(secret: string | Uint8Array): UploadStateCodec {
  // copied: WebCrypto wants an ArrayBuffer-backed view, and later changes to the caller's array must not matter
  const raw = typeof secret === "string" ? encoder.encode(secret) : new Uint8Array(secret);
  const key = crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);

  return {
    async sign(state) {
      // Positional and short: the state rides in every upload URL.
      const fields: unknown[] = [state.name, state.uuid, state.offset, state.startedAt, state.digest ?? null];
      if (state.owner) fields.push(state.owner);
      else if (!state.digest) fields.pop();
      const payload = encoder.encode(JSON.stringify(fields));
      const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await key, payload));
      return `${b64url(payload)}.${b64url(mac)}`;
    },

    async verify(token, name, uuid) {
      const invalid = (why: string) => new RegistryError("BLOB_UPLOAD_INVALID", `invalid upload state: ${why}`);
      if (!token) throw invalid("missing _state");
      if (token.length > 2048) throw invalid("malformed");
      const parts = token.split(".");
      if (parts.length !== 2) throw invalid("malformed");
      let payload: Uint8Array<ArrayBuffer>;
      let mac: Uint8Array<ArrayBuffer>;
      try {
        payload = new Uint8Array(fromB64url(parts[0] ?? ""));
        mac = new Uint8Array(fromB64url(parts[1] ?? ""));
      } catch {
        throw invalid("malformed");
      }
      // subtle.verify compares in constant time
      if (!(await crypto.subtle.verify("HMAC", await key, mac, payload))) throw invalid("bad signature");
      let fields: unknown;
      try {
        fields = JSON.parse(decoder.decode(payload));
      } catch {
        throw invalid("malformed");
      }
      const state = toState(fields);
      if (!state) throw invalid("malformed");
      if (state.name !== name || state.uuid !== uuid) throw invalid("state belongs to another upload");
      return state;
    },
  };
}

function toState(fields: unknown): UploadState | undefined {
  if (!Array.isArray(fields) || fields.length < 4 || fields.length > 6) return undefined;
  const [name, uuid, offset, startedAt, digest, owner] = fields as unknown[];
  if (typeof name !== "string" || typeof uuid !== "string") return undefined;
  if (!Number.isSafeInteger(offset) || (offset as number) < 0 || !Number.isSafeInteger(startedAt)) return undefined;
  if (digest !== undefined && digest !== null && typeof digest !== "string") return undefined;
  if (owner !== undefined && (typeof owner !== "string" || !/^[0-9a-f]{64}$/.test(owner))) return undefined;
  const state: UploadState = { name, uuid, offset: offset as number, startedAt: startedAt as number };
  if (typeof digest === "string") state.digest = digest;
  if (owner !== undefined) state.owner = owner;
  return state;
}
