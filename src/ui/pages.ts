/**
 * The pages, as functions from what they show to {@link Html}. Every value
 * goes through the escaping `html` template; links carry values only in
 * query strings built by URLSearchParams.
 *
 * @module
 */
import { html, type Html } from "./html.js";
import type { Descriptor } from "./backend.js";
import { formatBytes } from "../util/size.js";

/** What every page needs to draw its frame. */
export interface Frame {
  /** The UI's mount path, e.g. `/ui`. */
  prefix: string;
  /** The signed-in user. */
  user?: { name: string; admin: boolean };
  /** The CSRF token for the page's forms. */
  csrf?: string;
  /** The notice of the last action (a fixed text: notices.ts). */
  notice?: { text: string; error: boolean };
}

/** A link under the UI with a query string. */
export const link = (frame: Frame, page: string, query: Record<string, string | undefined> = {}): string => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") params.set(k, v);
  const q = params.toString();
  return `${frame.prefix}/${page}${q ? `?${q}` : ""}`;
};

const csrfField = (frame: Frame): Html => html`<input type="hidden" name="csrf" value="${frame.csrf ?? ""}">`;

/** The whole document around `body`. */
export function layout(frame: Frame, title: string, body: Html): string {
  const nav = frame.user
    ? html`<nav aria-label="Main"><a href="${link(frame, "")}">Repositories</a>${frame.user.admin ? html`<a href="${link(frame, "users")}">Users</a>` : ""}</nav>
<span>Signed in as <strong>${frame.user.name}</strong></span>
<form class="inline" method="post" action="${link(frame, "sign-out")}">${csrfField(frame)}<button type="submit">Sign out</button></form>`
    : html`<nav aria-label="Main"></nav>`;
  const notice = frame.notice ? html`<div class="notice${frame.notice.error ? " error" : ""}" role="status">${frame.notice.text}</div>` : "";
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} &middot; registry-kit</title><link rel="stylesheet" href="${frame.prefix}/assets/app.css"><script src="${frame.prefix}/assets/app.js" defer></script></head>
<body><a class="skip" href="#main">Skip to content</a><header><a class="brand" href="${link(frame, "")}">registry-kit</a>${nav}</header>
<main id="main">${notice}${body}</main></body></html>`}`;
}

/** The sign-in form. */
export function signInPage(frame: Frame, next: string | undefined): Html {
  return html`<h1>Sign in</h1><form method="post" action="${link(frame, "sign-in")}">
<input type="hidden" name="next" value="${next ?? ""}">
<label for="username">User name</label><input id="username" name="username" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<p><button type="submit">Sign in</button></p></form>`;
}

/** The repositories the user may pull, with search and paging (`next`: the sealed cursor of the next page). */
export function repositoriesPage(frame: Frame, names: string[], query: string, next: string | undefined): Html {
  const rows = names.map((name) => html`<tr><td><a href="${link(frame, "repository", { name })}">${name}</a></td></tr>`);
  return html`<h1>Repositories</h1><form method="get" action="${link(frame, "")}" role="search">
<label for="q">Search repositories</label><input id="q" name="q" value="${query}"> <button type="submit">Search</button></form>
${names.length ? html`<table><caption class="muted">Repositories you may pull</caption><thead><tr><th scope="col">Name</th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>No repositories${query ? " match" : " yet"}.</p>`}
${next ? html`<p><a href="${link(frame, "", { q: query, after: next })}">Next page</a></p>` : ""}`;
}

/** A tag row of the repository page. */
export interface TagRow {
  tag: string;
  digest: string;
  size: number | undefined;
  pushedAt: Date | undefined;
}

/** A repository's tags, sortable by name or push time; delete buttons for those who may. */
export function repositoryPage(frame: Frame, name: string, tags: TagRow[], sort: string, canDelete: boolean, more: boolean): Html {
  const rows = tags.map((t) => html`<tr><td><a href="${link(frame, "image", { name, ref: t.tag })}">${t.tag}</a></td>
<td class="mono">${t.digest}</td><td>${t.size === undefined ? "—" : formatSize(t.size)}</td>
<td>${t.pushedAt ? html`<time datetime="${t.pushedAt.toISOString()}">${age(t.pushedAt)}</time>` : "—"}</td>
${canDelete ? html`<td><form class="inline" method="post" action="${link(frame, "delete-tag")}">${csrfField(frame)}<input type="hidden" name="name" value="${name}"><input type="hidden" name="tag" value="${t.tag}"><button class="danger" type="submit" aria-label="Delete tag ${t.tag}">Delete</button></form></td>` : ""}</tr>`);
  const sortLink = (key: string, label: string) =>
    sort === key ? html`<strong>${label}</strong>` : html`<a href="${link(frame, "repository", { name, sort: key })}">${label}</a>`;
  return html`<h1>${name}</h1><p>Sort by ${sortLink("name", "name")} &middot; ${sortLink("pushed", "push time")}</p>
${tags.length ? html`<table><thead><tr><th scope="col">Tag</th><th scope="col">Digest</th><th scope="col">Size</th><th scope="col">Pushed</th>${canDelete ? html`<th scope="col">Actions</th>` : ""}</tr></thead><tbody>${rows}</tbody></table>` : html`<p>No tags.</p>`}
${more ? html`<p class="muted">Only the first ${tags.length} tags are shown.</p>` : ""}`;
}

/** What the image page shows. */
export interface ImageView {
  name: string;
  reference: string;
  digest: string;
  mediaType: string;
  /** The pull reference's host, e.g. `registry.example:5000`. */
  host: string;
  platforms?: Descriptor[];
  layers?: Descriptor[];
  config?: ImageConfig;
  referrers: Descriptor[];
}

/** The parts of an image config the page shows. */
export interface ImageConfig {
  created?: string;
  architecture?: string;
  os?: string;
  config?: { Entrypoint?: string[] | null; Cmd?: string[] | null; Env?: string[] | null; Labels?: Record<string, string> | null; WorkingDir?: string; User?: string };
  history?: { created?: string; created_by?: string; comment?: string; empty_layer?: boolean }[];
}

/** An image or index: platforms, layers, config, referrers, and the pull commands. */
export function imagePage(frame: Frame, v: ImageView): Html {
  const byTag = !v.reference.includes(":");
  const ref = `${v.host}/${v.name}${byTag ? `:${v.reference}` : `@${v.digest}`}`;
  const commands: [string, string][] = [
    ["podman", `podman pull ${ref}`],
    ["docker", `docker pull ${ref}`],
    ["skopeo", `skopeo copy docker://${ref} oci:${v.name.split("/").pop()}`],
  ];
  const pull = commands.map(([tool, cmd]) => html`<div class="pull"><span>${tool}</span><code id="pull-${tool}">${cmd}</code><button type="button" data-copy="pull-${tool}" aria-label="Copy the ${tool} command">Copy</button></div>`);
  const platforms = v.platforms?.map((m) => html`<tr><td><a href="${link(frame, "image", { name: v.name, ref: m.digest })}">${[m.platform?.os, m.platform?.architecture, m.platform?.variant].filter(Boolean).join("/") || "unknown"}</a></td><td class="mono">${m.digest}</td><td>${formatSize(m.size ?? 0)}</td></tr>`);
  const layers = v.layers?.map((l, i) => html`<tr><td>${i + 1}</td><td class="mono">${l.digest}</td><td>${l.mediaType}</td><td>${formatSize(l.size ?? 0)}</td></tr>`);
  const referrers = v.referrers.map((r) => html`<tr><td>${r.artifactType ?? r.mediaType}</td><td class="mono"><a href="${link(frame, "image", { name: v.name, ref: r.digest })}">${r.digest}</a></td><td>${formatSize(r.size ?? 0)}</td></tr>`);
  return html`<h1>${v.name}<span class="muted">${byTag ? `:${v.reference}` : `@${v.digest}`}</span></h1>
<dl><dt>Digest</dt><dd class="mono">${v.digest}</dd><dt>Media type</dt><dd>${v.mediaType}</dd></dl>
<h2>Pull</h2>${pull}
${platforms ? html`<h2>Platforms</h2><table><thead><tr><th scope="col">Platform</th><th scope="col">Digest</th><th scope="col">Size</th></tr></thead><tbody>${platforms}</tbody></table>` : ""}
${layers ? html`<h2>Layers</h2><p>${layers.length} layers, ${formatSize(v.layers!.reduce((n, l) => n + (l.size ?? 0), 0))} in all.</p><table><thead><tr><th scope="col">#</th><th scope="col">Digest</th><th scope="col">Media type</th><th scope="col">Size</th></tr></thead><tbody>${layers}</tbody></table>` : ""}
${v.config ? configSection(v.config) : ""}
<h2>Referrers</h2>${referrers.length ? html`<table><thead><tr><th scope="col">Artifact type</th><th scope="col">Digest</th><th scope="col">Size</th></tr></thead><tbody>${referrers}</tbody></table>` : html`<p>None (no signatures, SBOMs or attestations refer to this manifest).</p>`}`;
}

function configSection(c: ImageConfig): Html {
  const cfg = c.config ?? {};
  const list = (items: string[] | null | undefined) => (items?.length ? html`<code>${JSON.stringify(items)}</code>` : html`<span class="muted">none</span>`);
  const labels = Object.entries(cfg.Labels ?? {}).map(([k, v]) => html`<tr><td class="mono">${k}</td><td>${v}</td></tr>`);
  const env = (cfg.Env ?? []).map((e) => html`<li><code>${e}</code></li>`);
  const history = (c.history ?? []).map((h) => html`<tr><td>${h.created ?? ""}</td><td class="mono">${h.created_by ?? ""}</td><td>${h.empty_layer ? "no" : "yes"}</td></tr>`);
  return html`<h2>Configuration</h2><dl><dt>Platform</dt><dd>${c.os ?? "?"}/${c.architecture ?? "?"}</dd><dt>Created</dt><dd>${c.created ?? "unknown"}</dd>
<dt>Entrypoint</dt><dd>${list(cfg.Entrypoint)}</dd><dt>Command</dt><dd>${list(cfg.Cmd)}</dd>${cfg.WorkingDir ? html`<dt>Working directory</dt><dd><code>${cfg.WorkingDir}</code></dd>` : ""}${cfg.User ? html`<dt>User</dt><dd><code>${cfg.User}</code></dd>` : ""}</dl>
<h3>Environment</h3>${env.length ? html`<ul>${env}</ul>` : html`<p class="muted">none</p>`}
<h3>Labels</h3>${labels.length ? html`<table><thead><tr><th scope="col">Label</th><th scope="col">Value</th></tr></thead><tbody>${labels}</tbody></table>` : html`<p class="muted">none</p>`}
<h3>History</h3>${history.length ? html`<table><thead><tr><th scope="col">Created</th><th scope="col">Created by</th><th scope="col">Layer</th></tr></thead><tbody>${history}</tbody></table>` : html`<p class="muted">none</p>`}`;
}

/** A user of the administrators' page. */
export interface UserRow {
  id: number;
  username: string;
  sysadmin: boolean;
}

/** Users, for administrators: create, reset password, toggle admin, delete. */
export function usersPage(frame: Frame, users: UserRow[]): Html {
  const rows = users.map((u) => html`<tr><td>${u.username}</td><td>${u.sysadmin ? "yes" : "no"}</td><td>
<form class="inline" method="post" action="${link(frame, "users/admin")}">${csrfField(frame)}<input type="hidden" name="id" value="${u.id}"><input type="hidden" name="admin" value="${u.sysadmin ? "false" : "true"}"><button type="submit">${u.sysadmin ? "Revoke admin" : "Make admin"}</button></form>
<form class="inline" method="post" action="${link(frame, "users/password")}">${csrfField(frame)}<input type="hidden" name="id" value="${u.id}"><label class="inline" for="pw-${u.id}">New password for ${u.username}</label><input id="pw-${u.id}" name="password" type="password" autocomplete="new-password" minlength="8" required><button type="submit">Reset password</button></form>
<form class="inline" method="post" action="${link(frame, "users/delete")}">${csrfField(frame)}<input type="hidden" name="id" value="${u.id}"><button class="danger" type="submit" aria-label="Delete user ${u.username}">Delete</button></form></td></tr>`);
  return html`<h1>Users</h1><table><thead><tr><th scope="col">User</th><th scope="col">Administrator</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>
<h2>Create a user</h2><form method="post" action="${link(frame, "users/create")}">${csrfField(frame)}
<label for="new-username">User name</label><input id="new-username" name="username" required>
<label for="new-email">Email</label><input id="new-email" name="email" type="email" required>
<label for="new-password">Password</label><input id="new-password" name="password" type="password" autocomplete="new-password" minlength="8" required>
<p><button type="submit">Create user</button></p></form>`;
}

/** A size in B, KiB, MiB, GiB or TiB. */
export function formatSize(bytes: number): string {
  return formatBytes(bytes);
}

/** How long ago, in words. */
export function age(when: Date, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - when.getTime()) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 129600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}
