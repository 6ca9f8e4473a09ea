/**
 * HTML built by a tagged template that escapes every interpolated value:
 * repository names, tags, labels and history lines are attacker-controlled,
 * so nothing reaches the page unescaped unless it is already {@link Html}.
 *
 * @module
 */

/** A fragment of HTML that is safe to insert as is (built by {@link html}). */
export class Html {
  /** @param value - markup that is already safe. */
  constructor(readonly value: string) {}
  /** The markup. */
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escape text for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (value === undefined || value === null || value === false) return "";
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/**
 * `html\`<p>${text}</p>\``: every value is escaped, except {@link Html}
 * fragments; arrays are joined; `undefined`, `null` and `false` render nothing.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}
