/**
 * Parsing `Www-Authenticate` challenges (RFC 7235 auth-param syntax) as sent by
 * registries: `Bearer realm="…",service="…",scope="…",error="…"` or `Basic realm="…"`.
 *
 * @module
 */

/** One parsed challenge. Parameter names are lower-cased. */
export interface Challenge {
  /** The scheme, lower-cased: `"bearer"`, `"basic"`, … */
  scheme: string;
  /** Its parameters by lower-case name (`realm`, `service`, `scope`, `error`). */
  params: Record<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

/**
 * Parse a `Www-Authenticate` header value into its challenges. Tolerant of
 * spaces after commas and of unquoted values; never throws (junk yields `[]`
 * or the challenges read before it).
 */
export function parseChallenges(header: string | null | undefined): Challenge[] {
  const out: Challenge[] = [];
  if (!header) return out;
  let rest = header.trim();
  let current: Challenge | undefined;
  while (rest.length > 0) {
    rest = rest.replace(/^[\s,]+/, "");
    const name = TOKEN.exec(rest)?.[0];
    if (!name) break;
    rest = rest.slice(name.length);
    const afterSpaces = rest.replace(/^\s+/, "");
    if (afterSpaces.startsWith("=") && current) {
      // auth-param: name=value
      rest = afterSpaces.slice(1).replace(/^\s+/, "");
      let value: string;
      if (rest.startsWith('"')) {
        let i = 1;
        value = "";
        while (i < rest.length && rest[i] !== '"') {
          if (rest[i] === "\\" && i + 1 < rest.length) i++;
          value += rest[i];
          i++;
        }
        rest = rest.slice(i + 1);
      } else {
        value = TOKEN.exec(rest)?.[0] ?? "";
        rest = rest.slice(value.length);
      }
      current.params[name.toLowerCase()] = value;
    } else {
      current = { scheme: name.toLowerCase(), params: {} };
      out.push(current);
      rest = afterSpaces;
    }
  }
  return out;
}
