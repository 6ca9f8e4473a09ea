/**
 * Image references: where an image lives (registry base URL, repository) and
 * which version (tag or digest).
 *
 * @module
 */

/** A parsed image reference. */
export interface ImageReference {
  /** The registry's base URL, e.g. `http://127.0.0.1:5000`. */
  registry: string;
  /** The repository name, e.g. `library/alpine`. */
  repository: string;
  /** A tag (`v1`) or a digest (`sha256:…`). */
  reference: string;
}

/**
 * Parse `[scheme://]host[:port]/name[:tag|@digest]`. Without a scheme,
 * `defaultScheme` is used (default `https`; loopback hosts default to `http`).
 * Without a tag, `latest`.
 */
export function parseImageReference(text: string, defaultScheme?: "http" | "https"): ImageReference {
  const match = /^(?:(https?):\/\/)?([^/]+)\/(.+)$/.exec(text);
  if (!match) throw new TypeError(`not an image reference: ${JSON.stringify(text)}`);
  const [, scheme, host = "", path = ""] = match;
  let repository = path;
  let reference = "latest";
  const at = path.indexOf("@");
  if (at >= 0) {
    repository = path.slice(0, at);
    reference = path.slice(at + 1);
  } else {
    const colon = path.lastIndexOf(":");
    if (colon > path.lastIndexOf("/")) {
      repository = path.slice(0, colon);
      reference = path.slice(colon + 1);
    }
  }
  const loopback = /^(127\.|localhost(:|$)|\[::1\])/.test(host);
  const chosen = scheme ?? defaultScheme ?? (loopback ? "http" : "https");
  return { registry: `${chosen}://${host}`, repository, reference };
}

/** The URL of a registry API path for a reference's registry. */
export function apiUrl(ref: Pick<ImageReference, "registry">, path: string): URL {
  return new URL(path, ref.registry.endsWith("/") ? ref.registry : ref.registry + "/");
}
