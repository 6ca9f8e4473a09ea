/**
 * Reading a signature artifact: its manifest's JSON (layers, artifactType,
 * subject) and its blobs, each hashed against its descriptor before use.
 *
 * @module
 */
import { tryParseDigest } from "../oci/digest.js";
import { fromUtf8, toArrayBuffer, toHex } from "../util/bytes.js";
import { refuse } from "./refusal.js";
import type { SignatureArtifact } from "./types.js";

/** A descriptor of an artifact's manifest. */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

/** The fields of a signature manifest the verifiers read. */
export interface ArtifactManifest {
  mediaType?: string;
  artifactType?: string;
  config?: Descriptor;
  layers: Descriptor[];
  subject?: Descriptor;
  annotations?: Record<string, string>;
}

/** A signature payload is small; anything larger is refused before it is hashed or parsed. */
export const MAX_BLOB = 4 * 1024 * 1024;

function isDescriptor(d: unknown): d is Descriptor {
  const o = d as Descriptor;
  return typeof o === "object" && o !== null && typeof o.mediaType === "string" && typeof o.digest === "string" && typeof o.size === "number";
}

/** The manifest's JSON, or a `malformed` refusal. */
export function parseManifest(bytes: Uint8Array): ArtifactManifest {
  let m: ArtifactManifest;
  try {
    m = JSON.parse(fromUtf8(bytes)) as ArtifactManifest;
  } catch {
    return refuse("malformed", "the signature manifest is not JSON");
  }
  if (typeof m !== "object" || m === null || !Array.isArray(m.layers) || !m.layers.every(isDescriptor)) {
    return refuse("malformed", "the signature manifest has no valid layers");
  }
  if (m.subject !== undefined && !isDescriptor(m.subject)) refuse("malformed", "the signature manifest's subject is not a descriptor");
  return m;
}

/** The hex SHA-256 (or SHA-512) of `bytes`, as `algorithm:hex`. */
export async function digestOf(bytes: Uint8Array, algorithm: "sha256" | "sha512" = "sha256"): Promise<string> {
  const hash = await crypto.subtle.digest(algorithm === "sha256" ? "SHA-256" : "SHA-512", toArrayBuffer(bytes));
  return `${algorithm}:${toHex(new Uint8Array(hash))}`;
}

/** The blob `d` names, read through the artifact and checked against its digest and size. */
export async function readBlob(artifact: SignatureArtifact, d: Descriptor): Promise<Uint8Array> {
  const digest = tryParseDigest(d.digest);
  if (!digest) return refuse("malformed", `the descriptor's digest ${d.digest.slice(0, 80)} is not valid`);
  if (d.size > MAX_BLOB) return refuse("malformed", `the blob ${d.digest} is ${d.size} bytes, more than a signature's ${MAX_BLOB}`);
  const bytes = await artifact.read(digest.value);
  if (!bytes) return refuse("malformed", `the blob ${d.digest} is missing`);
  if (bytes.length !== d.size || (await digestOf(bytes, digest.algorithm)) !== digest.value) {
    return refuse("blob-mismatch", `the blob read for ${d.digest} does not have that digest and size`);
  }
  return bytes;
}

/** The JSON of `bytes`, or a `malformed` refusal naming `what`. */
export function parseJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(fromUtf8(bytes)) as unknown;
  } catch {
    return refuse("malformed", `the ${what} is not JSON`);
  }
}
