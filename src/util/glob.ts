/**
 * Globs over names (repositories, tags): `*` matches any run of characters,
 * `/` included, and `?` exactly one; everything else matches itself. The one
 * glob grammar of the project (the token service's public repositories, the
 * access rules, the write policies, retention).
 *
 * @module
 */

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** The regular-expression source (unanchored) of `glob`. */
export function globToRegex(glob: string): string {
  let out = "";
  for (const ch of glob) out += ch === "*" ? ".*" : ch === "?" ? "." : escapeRegex(ch);
  return out;
}

/** A test for whole values against `glob`. */
export function globMatcher(glob: string): (value: string) => boolean {
  const re = new RegExp(`^(?:${globToRegex(glob)})$`, "s");
  return (value) => re.test(value);
}

/** A test for whole values against any of `globs` (none: nothing matches). */
export function anyGlob(globs: readonly string[]): (value: string) => boolean {
  if (globs.length === 0) return () => false;
  const re = new RegExp(`^(?:${globs.map(globToRegex).join("|")})$`, "s");
  return (value) => re.test(value);
}
