/**
 * Compute API microversions: parsing what the client asks for
 * (`OpenStack-API-Version: compute 2.47` or the older
 * `X-OpenStack-Nova-API-Version: 2.47`, `latest` allowed) and echoing the
 * version that was used.
 *
 * @module
 */

/** A microversion `major.minor`. */
export interface Microversion {
  major: number;
  minor: number;
}

/** Parse `"2.47"`; `undefined` when malformed. */
export function parseMicroversion(text: string): Microversion | undefined {
  const m = /^(\d{1,3})\.(\d{1,4})$/.exec(text.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/** `a` compared to `b`: negative, zero or positive. */
export function compareMicroversions(a: Microversion, b: Microversion): number {
  return a.major - b.major || a.minor - b.minor;
}

/** `"2.47"`. */
export function formatMicroversion(v: Microversion): string {
  return `${v.major}.${v.minor}`;
}

/** What {@link requestedMicroversion} found. */
export type MicroversionRequest =
  | { kind: "default" }
  | { kind: "latest" }
  | { kind: "version"; version: Microversion }
  | { kind: "invalid"; text: string };

/**
 * The compute microversion a request asks for. `OpenStack-API-Version` wins
 * over `X-OpenStack-Nova-API-Version`; in the former, the `compute` entry of
 * a comma-separated list is used and other services' entries are ignored.
 */
export function requestedMicroversion(headers: Headers): MicroversionRequest {
  const generic = headers.get("openstack-api-version");
  let text: string | undefined;
  if (generic !== null) {
    for (const part of generic.split(",")) {
      const [service, version, ...extra] = part.trim().split(/\s+/);
      if (service?.toLowerCase() === "compute") {
        text = extra.length === 0 && version !== undefined ? version : part.trim();
        break;
      }
    }
  }
  if (text === undefined) {
    const legacy = headers.get("x-openstack-nova-api-version");
    if (legacy !== null) text = legacy.trim();
  }
  if (text === undefined) return { kind: "default" };
  if (text.toLowerCase() === "latest") return { kind: "latest" };
  const version = parseMicroversion(text);
  return version ? { kind: "version", version } : { kind: "invalid", text };
}

/** Response headers announcing the microversion used. */
export function microversionHeaders(v: Microversion): Record<string, string> {
  const s = formatMicroversion(v);
  return {
    "openstack-api-version": `compute ${s}`,
    "x-openstack-nova-api-version": s,
    vary: "OpenStack-API-Version, X-OpenStack-Nova-API-Version",
  };
}
