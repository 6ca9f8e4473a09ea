/**
 * The data behind each page, read through the services as the signed-in user
 * (see backend.ts), and turned into the page's {@link Html}.
 *
 * @module
 */
import type { Principal } from "../auth/access.js";
import { catalogPage, getJsonBlob, getManifest, getReferrers, mayDelete, mayPull, usersCall, type Descriptor, type Manifest, type UiBackend } from "./backend.js";
import { isValidName } from "../registry/names.js";
import type { TagDetailsPage } from "../registry/stores/base/tag-details.js";
import type { Html } from "./html.js";
import { imagePage, repositoriesPage, repositoryPage, usersPage, type Frame, type ImageConfig, type TagRow, type UserRow } from "./pages.js";

/** A page that could not be shown: its status and message. */
export class ViewError extends Error {
  /** @param status - the HTTP status to answer with. */
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** Repositories per page, and how many catalog entries one page may scan to fill it. */
const PAGE = 50;
const SCAN_LIMIT = 5000;

/**
 * The repositories `principal` may pull, `q` a case-insensitive substring,
 * after the catalog name `after`. The "next" link carries the last name
 * scanned sealed by `seal` (cursor.ts), never in the clear: it may be a name
 * the viewer may not see.
 */
export async function repositoriesView(
  backend: UiBackend, frame: Frame, principal: Principal, q: string, after: string | undefined, seal: (name: string) => Promise<string>,
): Promise<Html> {
  const shown: string[] = [];
  let scannedTo = after;
  let scanned = 0;
  let more = true;
  const needle = q.toLowerCase();
  while (shown.length < PAGE && more && scanned < SCAN_LIMIT) {
    const page = await catalogPage(backend, scannedTo, 500);
    scanned += page.names.length;
    more = page.more;
    for (const name of page.names) {
      scannedTo = name;
      if (needle && !name.toLowerCase().includes(needle)) continue;
      if (!(await mayPull(backend, principal, name))) continue;
      shown.push(name);
      if (shown.length === PAGE) break;
    }
    if (page.names.length === 0) more = false;
  }
  const next = (shown.length === PAGE || (more && scanned >= SCAN_LIMIT)) && scannedTo !== undefined ? await seal(scannedTo) : undefined;
  return repositoriesPage(frame, shown, q, next);
}

/** Where push times come from (the registry's storage), when the host can tell. */
export type TagLister = (name: string) => Promise<TagDetailsPage>;

/** A repository's tags with digest, size and push time. */
export async function repositoryView(backend: UiBackend, frame: Frame, principal: Principal, name: string, sort: string, listTags: TagLister, tagDelete: boolean): Promise<Html> {
  if (!isValidName(name)) throw new TypeError("invalid repository name");
  if (!(await mayPull(backend, principal, name))) throw new ViewError(404, "No such repository, or you may not pull it.");
  const { tags, truncated } = await listTags(name);
  const rows: TagRow[] = await Promise.all(tags.map(async (t) => {
    const answer = await getManifest(backend, principal, name, t.digest);
    return { tag: t.tag, digest: t.digest, size: answer.status === 200 ? imageSize(answer.json, answer.size) : undefined, pushedAt: t.pushedAt };
  }));
  if (sort === "pushed") rows.sort((a, b) => (b.pushedAt?.getTime() ?? 0) - (a.pushedAt?.getTime() ?? 0));
  const canDelete = tagDelete && (await mayDelete(backend, principal, name));
  return repositoryPage(frame, name, rows, sort === "pushed" ? "pushed" : "name", canDelete, truncated);
}

/** The bytes of an image: its manifest, config and layers (an index: its own size). */
function imageSize(m: Manifest | undefined, manifestSize: number): number {
  if (!m?.layers) return manifestSize;
  return manifestSize + (m.config?.size ?? 0) + m.layers.reduce((n, l) => n + (l.size ?? 0), 0);
}

/** An image or index page. */
export async function imageView(backend: UiBackend, frame: Frame, principal: Principal, name: string, reference: string, host: string): Promise<Html> {
  if (!isValidName(name)) throw new TypeError("invalid repository name");
  if (!(await mayPull(backend, principal, name))) throw new ViewError(404, "No such repository, or you may not pull it.");
  const answer = await getManifest(backend, principal, name, reference);
  if (answer.status !== 200 || !answer.json) throw new ViewError(404, "No such image.");
  const manifest = answer.json;
  const digest = answer.headers.get("docker-content-digest") ?? reference;
  let config: ImageConfig | undefined;
  if (manifest.config?.digest && manifest.config.size !== undefined && manifest.config.size <= 1024 * 1024) {
    const blob = await getJsonBlob<ImageConfig>(backend, principal, name, manifest.config.digest);
    if (blob.status === 200 && blob.json && typeof blob.json === "object") config = blob.json;
  }
  const referrers = await getReferrers(backend, principal, name, digest);
  return imagePage(frame, {
    name, reference, digest, host,
    mediaType: manifest.mediaType ?? answer.headers.get("content-type") ?? "unknown",
    ...(manifest.manifests ? { platforms: manifest.manifests } : {}),
    ...(manifest.layers ? { layers: manifest.layers } : {}),
    ...(config ? { config } : {}),
    referrers: referrers.status === 200 ? (referrers.json?.manifests ?? []).filter((d): d is Descriptor => typeof d === "object") : [],
  });
}

/** The administrators' user list (the first 100 users). */
export async function usersView(backend: UiBackend, frame: Frame, principal: Principal): Promise<Html> {
  const answer = await usersCall<{ user_id: number; username: string; sysadmin_flag: boolean }[]>(backend, principal, "GET", "?page_size=100");
  if (answer.status === 401 || answer.status === 403) throw new ViewError(403, "Only administrators manage users.");
  if (answer.status !== 200 || !Array.isArray(answer.json)) throw new ViewError(502, `The user service answered ${answer.status}.`);
  const users: UserRow[] = answer.json.map((u) => ({ id: u.user_id, username: u.username, sysadmin: u.sysadmin_flag }));
  return usersPage(frame, users);
}
