/**
 * Repository names, tags and manifest references: the distribution-spec
 * grammars. Checked before authorization so that junk never reaches the
 * access policy or a storage key.
 *
 * @module
 */
import { parseDigest, type Digest } from "./digest.js";
import { RegistryError } from "./errors.js";

/** Longest repository name accepted (distribution-spec: 255 with the host name; we count the path). */
export const MAX_NAME_LENGTH = 255;

const COMPONENT = "[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*";
const NAME = new RegExp(`^${COMPONENT}(?:/${COMPONENT})*$`);
const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;

/** True when `name` is a valid repository name. */
export function isValidName(name: string): boolean {
  return name.length > 0 && name.length <= MAX_NAME_LENGTH && NAME.test(name);
}

/** Throw `NAME_INVALID` (400) unless `name` is a valid repository name. */
export function assertName(name: string): void {
  if (!isValidName(name)) {
    throw new RegistryError("NAME_INVALID", "invalid repository name", 400, { name: name.slice(0, 300) });
  }
}

/** True when `tag` is a valid tag. */
export function isValidTag(tag: string): boolean {
  return TAG.test(tag);
}

/** A manifest reference: a tag or a digest. */
export type Reference = { kind: "tag"; tag: string } | { kind: "digest"; digest: Digest };

/**
 * Parse the `<reference>` of `/v2/<name>/manifests/<reference>`: a digest when
 * it contains `:`, else a tag. Throws `DIGEST_INVALID` or `TAG_INVALID` (400).
 */
export function parseReference(reference: string): Reference {
  if (reference.includes(":")) return { kind: "digest", digest: parseDigest(reference) };
  if (!isValidTag(reference)) {
    throw new RegistryError("TAG_INVALID", "invalid tag", 400, { tag: reference.slice(0, 300) });
  }
  return { kind: "tag", tag: reference };
}
