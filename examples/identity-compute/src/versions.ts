/**
 * Version discovery documents. OpenStack clients (keystoneauth1) fetch an
 * endpoint's URL, or the unversioned root above it, before the first real
 * call, and pick the API version from what they get. Each service answers in
 * its own historical shape, reproduced here.
 *
 * @module
 */
import { json } from "./http.js";

/** A link in a version document. */
export interface VersionLink {
  rel: string;
  href: string;
  type?: string;
}

/** The identity API version this example implements. */
export const IDENTITY_VERSION = "v3.14";

/** The identity version record (inside `version`, or in `versions.values`). */
export function identityVersion(base: string) {
  return {
    id: IDENTITY_VERSION,
    status: "stable",
    updated: "2020-04-07T00:00:00Z",
    links: [{ rel: "self", href: `${base}/v3/` }] as VersionLink[],
    "media-types": [{ base: "application/json", type: "application/vnd.openstack.identity-v3+json" }],
  };
}

/** `GET /v3`: the single-version document. */
export function identityVersionResponse(base: string): Response {
  return json({ version: identityVersion(base) });
}

/** `GET /` above `/v3`: keystone's 300 Multiple Choices list, `{"versions":{"values":[…]}}`. */
export function identityVersionsResponse(base: string): Response {
  const v = identityVersion(base);
  return json({ versions: { values: [v] } }, 300, { location: v.links[0]!.href });
}

/** The compute microversion range: the smallest and largest `2.x` the example answers. */
export const COMPUTE_MIN_MICROVERSION = "2.1";
/** See {@link COMPUTE_MIN_MICROVERSION}. */
export const COMPUTE_MAX_MICROVERSION = "2.79";

/** The compute version record, with its microversion range. */
export function computeVersion(base: string) {
  return {
    id: "v2.1",
    status: "CURRENT",
    version: COMPUTE_MAX_MICROVERSION,
    min_version: COMPUTE_MIN_MICROVERSION,
    updated: "2013-07-23T11:33:21Z",
    links: [
      { rel: "self", href: `${base}/v2.1/` },
      { rel: "describedby", type: "text/html", href: "https://docs.openstack.org/" },
    ] as VersionLink[],
    "media-types": [{ base: "application/json", type: "application/vnd.openstack.compute+json;version=2.1" }],
  };
}

/** `GET /` of compute: nova answers 200 with `{"versions":[…]}`. */
export function computeVersionsResponse(base: string): Response {
  const { "media-types": _m, ...v } = computeVersion(base);
  v.links = [v.links[0]!];
  return json({ versions: [v] });
}

/** `GET /v2.1` of compute: `{"version":{…}}`. */
export function computeVersionResponse(base: string): Response {
  return json({ version: computeVersion(base) });
}

/** The image API version this example claims (it implements only listing and showing images). */
export const IMAGE_VERSION = "v2.16";

/** The image version record. */
export function imageVersion(base: string) {
  return { id: IMAGE_VERSION, status: "CURRENT", links: [{ rel: "self", href: `${base}/v2/` }] as VersionLink[] };
}

/** `GET /` and `GET /versions` of image: glance's 300 `{"versions":[…]}`. */
export function imageVersionsResponse(base: string, status = 300): Response {
  return json({ versions: [imageVersion(base)] }, status);
}

/** `GET /v2` of image: a single-version document, which keystoneauth also understands. */
export function imageVersionResponse(base: string): Response {
  return json({ version: imageVersion(base) });
}
