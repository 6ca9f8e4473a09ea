/**
 * The crash harness's checks: the data directory as the fs driver shows it
 * (while the server is down), then the acknowledged writes through the
 * restarted server, then the interrupted uploads.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fsStorage } from "../../src/storage/fs/index.js";
import type { StorageDriver } from "../../src/storage/driver.js";
import { ADMIN_BASIC } from "./server.js";
import type { Api, Model, RepoModel } from "./workload.js";
import { sha256 } from "./workload.js";

export interface Figures {
  /** Blob data objects hashed on disk. */
  blobsHashed: number;
  /** Manifests, tags, links, referrers and user records parsed on disk. */
  metadataChecked: number;
  /** Acknowledged objects read back through the server. */
  ackedChecked: number;
  uploadsResumed: number;
  uploadsUnknown: number;
  /** Files in the fs driver's temp directory at the last check, left by kills (invisible to list, swept after 24 h). */
  tempFilesLeft: number;
}

export const emptyFigures = (): Figures => ({ blobsHashed: 0, metadataChecked: 0, ackedChecked: 0, uploadsResumed: 0, uploadsUnknown: 0, tempFilesLeft: 0 });

async function keys(storage: StorageDriver, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await storage.list(prefix, after === undefined ? { limit: 1000 } : { after, limit: 1000 });
    out.push(...page.keys);
    if (!page.truncated) return out;
    after = page.keys.at(-1);
  }
}

async function readAll(storage: StorageDriver, key: string): Promise<Uint8Array | undefined> {
  const stream = await storage.read(key);
  return stream && new Uint8Array(await new Response(stream).arrayBuffer());
}

async function hashObject(storage: StorageDriver, key: string): Promise<string> {
  const hash = createHash("sha256");
  const stream = await storage.read(key);
  if (!stream) throw new Error(`${key} vanished`);
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
  return `sha256:${hash.digest("hex")}`;
}

const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));

/**
 * Walk the data directory through the fs driver: every blob matches its digest,
 * every manifest parses and references only blobs linked and present, every tag
 * and referrer names an existing revision, every user record parses.
 */
export async function checkDisk(data: string, figures: Figures): Promise<string[]> {
  const root = path.join(data, "registry");
  const problems: string[] = [];
  figures.tempFilesLeft = (await readdir(path.join(root, "~tmp")).catch(() => [])).length;
  const storage = fsStorage({ root, fsync: false });
  try {
    const blobKeys = await keys(storage, "blobs");
    const blobs = new Set<string>();
    for (const key of blobKeys) {
      const match = /^blobs\/sha256\/[0-9a-f]{2}\/([0-9a-f]{64})\/data$/.exec(key);
      if (!match) {
        problems.push(`unexpected key ${key}`);
        continue;
      }
      const digest = `sha256:${match[1]}`;
      figures.blobsHashed++;
      const actual = await hashObject(storage, key);
      if (actual !== digest) problems.push(`blob ${digest} holds ${actual}`);
      blobs.add(digest);
    }

    const all = await keys(storage, "repositories");
    const linked = new Set(all.filter((k) => k.includes("/_layers/")).map((k) => k.replace(/^(.*)\/_layers\/sha256\/([0-9a-f]+)$/, "$1 sha256:$2")));
    const revisions = new Set(all.filter((k) => k.includes("/_manifests/revisions/")).map((k) => k.replace(/^(.*)\/_manifests\/revisions\/sha256\/([0-9a-f]+)$/, "$1 sha256:$2")));
    for (const key of all) {
      const repo = key.slice(0, key.search(/\/_[a-z]+\//));
      figures.metadataChecked++;
      if (key.includes("/_layers/")) {
        const digest = `sha256:${key.split("/").at(-1)}`;
        if (text(await readAll(storage, key)) !== digest) problems.push(`link ${key} does not hold its digest`);
        if (!blobs.has(digest)) problems.push(`link ${key} to a missing blob`);
      } else if (key.includes("/_manifests/revisions/")) {
        const digest = `sha256:${key.split("/").at(-1)}`;
        let meta: { mediaType?: unknown; size?: unknown };
        try {
          meta = JSON.parse(text(await readAll(storage, key)) ?? "") as typeof meta;
        } catch {
          problems.push(`revision ${key} is not JSON`);
          continue;
        }
        if (!blobs.has(digest)) {
          problems.push(`revision ${key} without manifest bytes`);
          continue;
        }
        const bytes = (await readAll(storage, `blobs/sha256/${digest.slice(7, 9)}/${digest.slice(7)}/data`))!;
        if (meta.size !== bytes.length || typeof meta.mediaType !== "string") problems.push(`revision ${key} metadata wrong`);
        let doc: { config?: { digest: string }; layers?: { digest: string }[]; manifests?: { digest: string }[] };
        try {
          doc = JSON.parse(new TextDecoder().decode(bytes)) as typeof doc;
        } catch {
          problems.push(`manifest ${digest} does not parse`);
          continue;
        }
        for (const d of [...(doc.config ? [doc.config] : []), ...(doc.layers ?? [])]) {
          if (!linked.has(`${repo} ${d.digest}`)) problems.push(`manifest ${repo}@${digest} references ${d.digest}, not linked`);
          if (!blobs.has(d.digest)) problems.push(`manifest ${repo}@${digest} references missing blob ${d.digest}`);
        }
        for (const child of doc.manifests ?? []) {
          if (!revisions.has(`${repo} ${child.digest}`)) problems.push(`index ${repo}@${digest} lost child ${child.digest}`);
        }
      } else if (key.includes("/_manifests/tags/")) {
        const digest = text(await readAll(storage, key))?.trim();
        if (!revisions.has(`${repo} ${digest}`)) problems.push(`tag ${key} points at ${digest}, not a revision`);
      } else if (key.includes("/_referrers/")) {
        const entry = JSON.parse(text(await readAll(storage, key)) ?? "null") as { digest?: string } | null;
        if (!entry || entry.digest !== key.split("/").at(-1) || !revisions.has(`${repo} ${entry.digest}`)) problems.push(`referrer ${key} broken`);
      } else if (!key.includes("/_uploads/")) {
        problems.push(`unexpected key ${key}`);
      }
    }

    for (const key of await keys(storage, "_users")) {
      figures.metadataChecked++;
      const value = text(await readAll(storage, key)) ?? "";
      if (key.includes("/by-id/")) {
        try {
          const record = JSON.parse(value) as { id?: unknown; username?: unknown; passwordHash?: unknown };
          if (typeof record.id !== "number" || typeof record.username !== "string" || typeof record.passwordHash !== "string") problems.push(`user ${key} incomplete`);
        } catch {
          problems.push(`user ${key} is not JSON`);
        }
      } else if (!/^[0-9]+$/.test(value)) problems.push(`user index ${key} holds ${JSON.stringify(value)}`);
    }
  } finally {
    await storage.close?.();
  }
  return problems;
}

/** Every acknowledged write is there; the "maybe" ones are collapsed to what happened. */
export async function checkAcked(api: Api, model: Model, figures: Figures): Promise<string[]> {
  const problems: string[] = [];
  for (const repo of model.repos) {
    for (const [digest, blob] of repo.blobs) {
      figures.ackedChecked++;
      if (!blob.checked) {
        const res = await api.fetch(`/v2/${repo.name}/blobs/${digest}`);
        const got = res.status === 200 ? sha256(new Uint8Array(await res.arrayBuffer())) : `status ${res.status}`;
        if (got !== digest) problems.push(`acked blob ${repo.name}@${digest}: ${got}`);
        blob.checked = true;
      } else {
        const res = await api.fetch(`/v2/${repo.name}/blobs/${digest}`, { method: "HEAD" });
        if (res.status !== 200) problems.push(`acked blob ${repo.name}@${digest}: HEAD ${res.status}`);
      }
    }
    for (const [digest, m] of repo.manifests) {
      figures.ackedChecked++;
      const res = await api.fetch(`/v2/${repo.name}/manifests/${digest}`, { headers: { accept: "*/*" } });
      const body = res.status === 200 ? await res.text() : undefined;
      if (res.status === 200 && body !== m.bytes) problems.push(`manifest ${repo.name}@${digest} bytes differ`);
      if (res.status !== 200 && res.status !== 404) problems.push(`manifest ${repo.name}@${digest}: ${res.status}`);
      const found = res.status === 200;
      if (m.state === "present" && !found) problems.push(`acked manifest ${repo.name}@${digest} is gone`);
      if (m.state === "deleted" && found) problems.push(`deleted manifest ${repo.name}@${digest} is back`);
      if (m.state === "maybe") m.state = found ? "present" : "deleted";
    }
    for (const [tag, possible] of repo.tags) {
      figures.ackedChecked++;
      const res = await api.fetch(`/v2/${repo.name}/manifests/${tag}`, { method: "HEAD", headers: { accept: "*/*" } });
      const value = res.status === 200 ? res.headers.get("docker-content-digest") : res.status === 404 ? null : `status ${res.status}`;
      if (!possible.has(value)) problems.push(`tag ${repo.name}:${tag} is ${value}, expected one of ${[...possible].join(", ")}`);
      else repo.tags.set(tag, new Set([value]));
    }
  }
  for (const user of [...model.users]) {
    figures.ackedChecked++;
    const works: string[] = [];
    for (const pw of user.passwords) {
      const res = await api.fetch("/service/token?service=registry-kit", { basic: `Basic ${Buffer.from(`${user.username}:${pw}`).toString("base64")}` });
      if (res.status === 200) works.push(pw);
      else if (res.status !== 401) problems.push(`token for ${user.username}: ${res.status}`);
      await res.body?.cancel();
    }
    const exists = works.length > 0;
    if (!user.exists.has(exists)) problems.push(`user ${user.username} ${exists ? "exists" : "is missing"}, expected ${[...user.exists]}`);
    if (works.length > 1) problems.push(`user ${user.username}: ${works.length} passwords work`);
    if (exists) {
      user.exists = new Set([true]);
      user.passwords = new Set(works);
    }
    // Gone for good, or created without an acknowledgement (so no id): nothing more to do with it.
    if (!exists || user.id === undefined) model.users.splice(model.users.indexOf(user), 1);
  }
  const list = await api.fetch("/api/users?page_size=100", { basic: ADMIN_BASIC });
  if (list.status !== 200) problems.push(`GET /api/users: ${list.status}`);
  else await list.json();
  return problems;
}

/** Resume every upload left open (by design or by the kill) with its old `_state`, and finish it. */
export async function resumeUploads(api: Api, model: Model, figures: Figures): Promise<string[]> {
  const problems: string[] = [];
  for (const repo of model.repos) {
    for (const session of repo.sessions.splice(0)) problems.push(...(await resume(api, model, repo, session, figures)));
  }
  return problems;
}

async function resume(api: Api, model: Model, repo: RepoModel, session: { location: string; content: Uint8Array; acked: number }, figures: Figures): Promise<string[]> {
  const status = await api.fetch(session.location);
  if (status.status === 404) {
    const body = (await status.json()) as { errors?: { code: string }[] };
    if (body.errors?.[0]?.code !== "BLOB_UPLOAD_UNKNOWN") return [`resume: 404 ${JSON.stringify(body)}`];
    figures.uploadsUnknown++;
    return [];
  }
  if (status.status !== 204) return [`resume status: ${status.status} ${await status.text()}`];
  const end = Number(/^0-(\d+)$/.exec(status.headers.get("range") ?? "")?.[1]);
  // "0-0" is both 0 and 1 bytes (Distribution's convention); the acked size decides, a 416 corrects.
  let offsets = end === 0 ? [session.acked >= 1 ? 1 : 0, session.acked >= 1 ? 0 : 1] : [end + 1];
  offsets = offsets.filter((n) => n >= session.acked && n <= session.content.length);
  if (offsets.length === 0) return [`resume: Range ${status.headers.get("range")} but ${session.acked} bytes were acknowledged of ${session.content.length}`];
  let location = new URL(status.headers.get("location")!, "http://x");
  for (const offset of offsets) {
    const rest = session.content.subarray(offset);
    let path = location.pathname + location.search;
    if (rest.length > 0) {
      const patch = await api.fetch(path, {
        method: "PATCH", body: rest, headers: { "content-type": "application/octet-stream", "content-range": `${offset}-${session.content.length - 1}` },
      });
      if (patch.status === 416 && offsets.length > 1) continue;
      if (patch.status !== 202) return [`resume PATCH at ${offset}: ${patch.status} ${await patch.text()}`];
      location = new URL(patch.headers.get("location")!, "http://x");
      path = location.pathname + location.search;
    }
    const digest = sha256(session.content);
    const put = await api.fetch(`${path}&digest=${digest}`, { method: "PUT" });
    if (put.status !== 201) return [`resume PUT: ${put.status} ${await put.text()}`];
    repo.blobs.set(digest, { bytes: session.content, checked: false });
    model.acked++;
    figures.uploadsResumed++;
    return [];
  }
  return ["resume: no offset worked"];
}
