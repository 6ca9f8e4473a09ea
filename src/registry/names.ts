/**
 * Repository names, tags and manifest references: the distribution-spec
 * grammars. Checked before authorization so that junk never reaches the
 * access policy or a storage key.
 *
 * @module
 */
import { parseDigest, type Digest } from "../oci/digest.js";
import { RegistryError } from "../oci/errors.js";

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

/**
 * A manifest reference: a tag, a digest, or a string that is neither. The last
 * names nothing that could exist, so it is never a storage key: GET, HEAD and
 * DELETE answer it 404 `MANIFEST_UNKNOWN` (the distribution-spec lets GET and
 * HEAD of a manifest fail only with 404), PUT refuses it with `TAG_INVALID`.
 */
export type Reference = { kind: "tag"; tag: string } | { kind: "digest"; digest: Digest } | { kind: "invalidTag"; tag: string };

/**
 * Parse the `<reference>` of `/v2/<name>/manifests/<reference>`: a digest when
 * it contains `:` (else `DIGEST_INVALID`, 400), a tag when it matches the tag
 * grammar, an `invalidTag` otherwise.
 */
export function parseReference(reference: string): Reference {
  if (reference.includes(":")) return { kind: "digest", digest: parseDigest(reference) };
  return isValidTag(reference) ? { kind: "tag", tag: reference } : { kind: "invalidTag", tag: reference };
}

/** `TAG_INVALID` (400), for a PUT to an `invalidTag` reference. */
export function tagInvalid(tag: string): RegistryError {
  return new RegistryError("TAG_INVALID", "invalid tag", 400, { tag: tag.slice(0, 300) });
}
