/**
 * A tiny XML reader and writer for the few S3 documents the driver handles
 * (ListObjectsV2, InitiateMultipartUpload, CopyObject/UploadPartCopy results,
 * DeleteObjects results and error bodies). It is not a general XML parser:
 * no DTDs, no namespaces (prefixes are kept in names, `xmlns` attributes are
 * ignored), attributes are skipped. It does decode the five predefined
 * entities and numeric character references, and CDATA sections.
 *
 * @module
 */

/** An element: its name, its child elements and its text content (concatenated). */
export interface XmlElement {
  /** The element name as written, prefix included. */
  name: string;
  /** Child elements, in document order. */
  children: XmlElement[];
  /** The element's text content, entities decoded. */
  text: string;
}

/** Thrown for input this reader cannot make sense of. */
export class XmlError extends Error {
  /** Always `"XmlError"`. */
  override readonly name = "XmlError";
}

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** Decode the predefined XML entities and numeric character references. */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (!Number.isFinite(code) || code < 0 || code > 0x10ffff) throw new XmlError(`bad character reference ${whole}`);
      return String.fromCodePoint(code);
    }
    const named = NAMED[ref];
    if (named === undefined) throw new XmlError(`unknown entity ${whole}`);
    return named;
  });
}

/** Escape text for use in element content or attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&${c === "<" ? "lt" : c === ">" ? "gt" : c === "&" ? "amp" : c === '"' ? "quot" : "apos"};`);
}

/** Parse a document and return its root element. */
export function parseXml(source: string): XmlElement {
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let i = 0;
  const n = source.length;
  while (i < n) {
    const lt = source.indexOf("<", i);
    const textEnd = lt === -1 ? n : lt;
    if (textEnd > i) {
      const raw = source.slice(i, textEnd);
      const top = stack[stack.length - 1];
      if (top) top.text += decodeEntities(raw);
      else if (raw.trim() !== "") throw new XmlError("text outside the root element");
    }
    if (lt === -1) break;
    if (source.startsWith("<?", lt)) {
      const end = source.indexOf("?>", lt + 2);
      if (end === -1) throw new XmlError("unterminated processing instruction");
      i = end + 2;
    } else if (source.startsWith("<!--", lt)) {
      const end = source.indexOf("-->", lt + 4);
      if (end === -1) throw new XmlError("unterminated comment");
      i = end + 3;
    } else if (source.startsWith("<![CDATA[", lt)) {
      const end = source.indexOf("]]>", lt + 9);
      if (end === -1) throw new XmlError("unterminated CDATA section");
      const top = stack[stack.length - 1];
      if (!top) throw new XmlError("CDATA outside the root element");
      top.text += source.slice(lt + 9, end);
      i = end + 3;
    } else if (source.startsWith("<!", lt)) {
      throw new XmlError("DTDs are not supported");
    } else if (source[lt + 1] === "/") {
      const end = source.indexOf(">", lt + 2);
      if (end === -1) throw new XmlError("unterminated end tag");
      const name = source.slice(lt + 2, end).trim();
      const open = stack.pop();
      if (!open || open.name !== name) throw new XmlError(`unexpected end tag </${name}>`);
      i = end + 1;
    } else {
      const end = findTagEnd(source, lt + 1);
      let body = source.slice(lt + 1, end);
      const selfClosing = body.endsWith("/");
      if (selfClosing) body = body.slice(0, -1);
      const match = /^[^\s/>]+/.exec(body);
      if (!match) throw new XmlError("element without a name");
      const element: XmlElement = { name: match[0], children: [], text: "" };
      const parent = stack[stack.length - 1];
      if (parent) parent.children.push(element);
      else if (root) throw new XmlError("more than one root element");
      else root = element;
      if (!selfClosing) stack.push(element);
      i = end + 1;
    }
  }
  if (stack.length > 0) throw new XmlError(`unclosed element <${stack[stack.length - 1]!.name}>`);
  if (!root) throw new XmlError("no root element");
  return root;
}

/** The index of the `>` closing a start tag, skipping quoted attribute values. */
function findTagEnd(source: string, from: number): number {
  let quote = "";
  for (let i = from; i < source.length; i++) {
    const c = source[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ">") return i;
  }
  throw new XmlError("unterminated start tag");
}

/** The first child element with this name. */
export function child(element: XmlElement, name: string): XmlElement | undefined {
  return element.children.find((c) => c.name === name);
}

/** Every child element with this name. */
export function children(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((c) => c.name === name);
}

/** The text of the first child element with this name. */
export function childText(element: XmlElement, name: string): string | undefined {
  return child(element, name)?.text;
}
