/**
 * What the crash harness sends, and what it remembers of it.
 *
 * Each registry worker owns one repository and runs one operation at a time
 * (pushes with monolithic, POST+PUT and chunked uploads, tag overwrites, index
 * and referrer pushes, tag and manifest deletes, uploads deliberately left
 * open); a users worker creates users, changes passwords and deletes users.
 * Before a request the model widens to every outcome the request could have
 * (a tag may hold the old or the new digest); the acknowledgement (201/202/204)
 * narrows it again. A SIGKILL leaves the widened sets, and the checks after the
 * restart accept exactly those.
 */
import { createHash, randomBytes, randomInt } from "node:crypto";
import { ADMIN_BASIC } from "./server.js";

export const sha256 = (data: Uint8Array | string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;
const MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const INDEX = "application/vnd.oci.image.index.v1+json";

export interface Session {
  /** Path and query of the last Location we got (the port changes between starts). */
  location: string;
  content: Uint8Array;
  /** Bytes the registry acknowledged. */
  acked: number;
}

export interface ManifestModel {
  bytes: string;
  state: "present" | "deleted" | "maybe";
  /** Index children and subjects are never deleted (an index must not lose a child). */
  pinned: boolean;
}

export interface RepoModel {
  name: string;
  /** Acknowledged blobs (never deleted by the workload). */
  blobs: Map<string, { bytes: Uint8Array; checked: boolean }>;
  manifests: Map<string, ManifestModel>;
  /** Possible values of each tag; `null` = absent. */
  tags: Map<string, Set<string | null>>;
  sessions: Session[];
}

export interface UserModel {
  username: string;
  id?: number;
  exists: Set<boolean>;
  passwords: Set<string>;
}

export interface Model {
  repos: RepoModel[];
  users: UserModel[];
  userCounter: number;
  /** Requests the registry acknowledged, over all trials. */
  acked: number;
}

export function newModel(workers: number, epoch: number): Model {
  return {
    repos: Array.from({ length: workers }, (_, i) => ({
      name: `crash/e${epoch}w${i}`, blobs: new Map(), manifests: new Map(), tags: new Map(), sessions: [],
    })),
    users: [],
    userCounter: 0,
    acked: 0,
  };
}

/** A connection to one running server. Any network error means it was killed. */
export class Api {
  constructor(readonly base: string, private readonly token: string) {}

  static async connect(base: string, model: Model): Promise<Api> {
    const scopes = model.repos.map((r) => `scope=${encodeURIComponent(`repository:${r.name}:pull,push,delete`)}`).join("&");
    const res = await fetch(`${base}/service/token?service=registry-kit&${scopes}`, { headers: { authorization: ADMIN_BASIC } });
    if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
    return new Api(base, ((await res.json()) as { token: string }).token);
  }

  fetch(path: string, init: Omit<RequestInit, "body"> & { basic?: string; body?: Uint8Array | string } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set("authorization", init.basic ?? `Bearer ${this.token}`);
    return fetch(`${this.base}${path}`, { ...init, headers, body: init.body as BodyInit | undefined });
  }
}

export class Problem extends Error {}

function pathOf(location: string): string {
  const url = new URL(location, "http://x");
  return url.pathname + url.search;
}

const SHARED = Array.from({ length: 4 }, (_, i) => new Uint8Array(512 * 1024 + i).fill(i + 1));

function randomContent(): Uint8Array {
  const r = Math.random();
  if (r < 0.15) return SHARED[randomInt(SHARED.length)]!; // same blob data key from every worker
  const size = r < 0.6 ? randomInt(1, 8 * 1024) : r < 0.9 ? randomInt(8 * 1024, 256 * 1024) : randomInt(1024 * 1024, 3 * 1024 * 1024);
  return randomBytes(size);
}

async function expectStatus(res: Response, what: string, ...statuses: number[]): Promise<Response> {
  if (!statuses.includes(res.status)) throw new Problem(`${what}: ${res.status} ${await res.text().catch(() => "")}`);
  return res;
}

/** Upload one blob by one of the three ways clients do; leaves the session in the model until it completes. */
export async function uploadBlob(api: Api, model: Model, repo: RepoModel, content: Uint8Array, leaveOpen = false): Promise<string> {
  const digest = sha256(content);
  const mode = leaveOpen ? 2 : randomInt(3);
  const base = `/v2/${repo.name}/blobs/uploads/`;
  if (mode === 0) {
    await expectStatus(await api.fetch(`${base}?digest=${digest}`, { method: "POST", body: content }), "monolithic POST", 201);
  } else {
    const post = await expectStatus(await api.fetch(base, { method: "POST" }), "POST upload", 202);
    const session: Session = { location: pathOf(post.headers.get("location")!), content, acked: 0 };
    repo.sessions.push(session);
    if (mode === 2) {
      const chunks = Math.min(content.length, randomInt(2, 5));
      const step = Math.ceil(content.length / chunks);
      for (let start = 0; start < content.length; start += step) {
        const chunk = content.subarray(start, Math.min(content.length, start + step));
        const patch = await expectStatus(await api.fetch(session.location, {
          method: "PATCH", body: chunk, headers: { "content-type": "application/octet-stream", "content-range": `${start}-${start + chunk.length - 1}` },
        }), "PATCH", 202);
        session.location = pathOf(patch.headers.get("location")!);
        session.acked = start + chunk.length;
        model.acked++;
        if (leaveOpen) return digest; // an upload in progress, resumed after the next restart
      }
      await finish(api, session, digest, new Uint8Array(0));
    } else {
      await finish(api, session, digest, content);
    }
    repo.sessions.splice(repo.sessions.indexOf(session), 1);
  }
  repo.blobs.set(digest, { bytes: content, checked: false });
  model.acked++;
  return digest;
}

async function finish(api: Api, session: Session, digest: string, body: Uint8Array): Promise<void> {
  const sep = session.location.includes("?") ? "&" : "?";
  await expectStatus(await api.fetch(`${session.location}${sep}digest=${digest}`, {
    method: "PUT", body, headers: { "content-type": "application/octet-stream" },
  }), "PUT upload", 201);
}

async function putManifest(api: Api, model: Model, repo: RepoModel, reference: string | undefined, doc: unknown, type: string, pinned = false): Promise<string> {
  const bytes = JSON.stringify(doc);
  const digest = sha256(bytes);
  const entry = repo.manifests.get(digest) ?? { bytes, state: "maybe" as const, pinned };
  if (entry.state !== "present") entry.state = "maybe";
  entry.pinned ||= pinned;
  repo.manifests.set(digest, entry);
  let tag: Set<string | null> | undefined;
  if (reference !== undefined) {
    tag = repo.tags.get(reference) ?? new Set([null]);
    tag.add(digest);
    repo.tags.set(reference, tag);
  }
  await expectStatus(await api.fetch(`/v2/${repo.name}/manifests/${reference ?? digest}`, {
    method: "PUT", body: bytes, headers: { "content-type": type },
  }), "manifest PUT", 201);
  entry.state = "present";
  if (tag && reference !== undefined) repo.tags.set(reference, new Set([digest]));
  model.acked++;
  return digest;
}

async function pushImage(api: Api, model: Model, repo: RepoModel, reference: string | undefined, pinned = false): Promise<string> {
  const config = new TextEncoder().encode(JSON.stringify({ architecture: "amd64", os: "linux", seed: randomBytes(8).toString("hex") }));
  const configDigest = await uploadBlob(api, model, repo, config);
  const layers: { digest: string; size: number }[] = [];
  for (let i = randomInt(1, 4); i > 0; i--) {
    const content = randomContent();
    layers.push({ digest: await uploadBlob(api, model, repo, content), size: content.length });
  }
  return putManifest(api, model, repo, reference, {
    schemaVersion: 2,
    mediaType: MANIFEST,
    config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: configDigest, size: config.length },
    layers: layers.map((l) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar", ...l })),
  }, MANIFEST, pinned);
}

const TAGS = ["a", "b", "c"];
const present = (repo: RepoModel) => [...repo.manifests].filter(([, m]) => m.state === "present");

/** One registry worker: operations one after another until `stop()` says so or the server dies. */
export async function registryWorker(api: Api, model: Model, repo: RepoModel, stop: () => boolean): Promise<void> {
  while (!stop()) {
    const r = Math.random();
    if (r < 0.4) {
      await pushImage(api, model, repo, TAGS[randomInt(TAGS.length)]);
    } else if (r < 0.5) {
      const children = [await pushImage(api, model, repo, undefined, true), await pushImage(api, model, repo, undefined, true)];
      await putManifest(api, model, repo, "idx", {
        schemaVersion: 2,
        mediaType: INDEX,
        manifests: children.map((d) => ({ mediaType: MANIFEST, digest: d, size: repo.manifests.get(d)!.bytes.length })),
      }, INDEX);
    } else if (r < 0.6) {
      const candidates = present(repo);
      if (candidates.length === 0) continue;
      const [subject, m] = candidates[randomInt(candidates.length)]!;
      m.pinned = true;
      const empty = await uploadBlob(api, model, repo, new TextEncoder().encode("{}"));
      const sig = randomBytes(64);
      const layer = await uploadBlob(api, model, repo, sig);
      await putManifest(api, model, repo, Math.random() < 0.5 ? "sig" : undefined, {
        schemaVersion: 2,
        mediaType: MANIFEST,
        artifactType: "application/vnd.example.signature",
        config: { mediaType: "application/vnd.oci.empty.v1+json", digest: empty, size: 2 },
        layers: [{ mediaType: "application/octet-stream", digest: layer, size: sig.length }],
        subject: { mediaType: MANIFEST, digest: subject, size: m.bytes.length },
      }, MANIFEST);
    } else if (r < 0.7) {
      const tag = TAGS[randomInt(TAGS.length)]!;
      const possible = repo.tags.get(tag) ?? new Set([null]);
      const couldBeAbsent = possible.has(null);
      possible.add(null);
      repo.tags.set(tag, possible);
      const res = await api.fetch(`/v2/${repo.name}/manifests/${tag}`, { method: "DELETE" });
      if (res.status === 202 || (res.status === 404 && couldBeAbsent)) {
        repo.tags.set(tag, new Set([null]));
        if (res.status === 202) model.acked++;
      } else throw new Problem(`DELETE tag ${tag}: ${res.status} (possible ${[...possible]})`);
    } else if (r < 0.8) {
      const candidates = present(repo).filter(([, m]) => !m.pinned);
      if (candidates.length === 0) continue;
      const [digest, m] = candidates[randomInt(candidates.length)]!;
      m.state = "maybe";
      for (const values of repo.tags.values()) if (values.has(digest)) values.add(null);
      await expectStatus(await api.fetch(`/v2/${repo.name}/manifests/${digest}`, { method: "DELETE" }), "DELETE manifest", 202);
      m.state = "deleted";
      for (const values of repo.tags.values()) if (values.delete(digest)) values.add(null);
      model.acked++;
    } else if (repo.sessions.length < 3) {
      await uploadBlob(api, model, repo, randomContent(), true);
    }
  }
}

/** The users worker: create, change a password, delete; at most a handful alive. */
export async function usersWorker(api: Api, model: Model, epoch: number, stop: () => boolean): Promise<void> {
  const password = () => `Pw${randomBytes(6).toString("hex")}9Z`;
  while (!stop()) {
    const known = model.users.filter((u) => u.id !== undefined && u.exists.size === 1 && u.exists.has(true) && u.passwords.size === 1);
    const r = Math.random();
    if (known.length < 2 || (r < 0.4 && known.length < 5)) {
      const username = `e${epoch}user${++model.userCounter}`;
      const pw = password();
      const user: UserModel = { username, exists: new Set([true, false]), passwords: new Set([pw]) };
      model.users.push(user);
      const res = await expectStatus(await api.fetch("/api/users", {
        method: "POST", basic: ADMIN_BASIC, body: JSON.stringify({ username, email: `${username}@example.test`, password: pw }),
        headers: { "content-type": "application/json" },
      }), "create user", 201);
      user.id = Number(/\/(\d+)$/.exec(res.headers.get("location") ?? "")?.[1]);
      user.exists = new Set([true]);
      model.acked++;
    } else if (r < 0.75) {
      const user = known[randomInt(known.length)]!;
      const pw = password();
      user.passwords.add(pw);
      await expectStatus(await api.fetch(`/api/users/${user.id}/password`, {
        method: "PUT", basic: ADMIN_BASIC, body: JSON.stringify({ new_password: pw }), headers: { "content-type": "application/json" },
      }), "change password", 204);
      user.passwords = new Set([pw]);
      model.acked++;
    } else {
      const user = known[randomInt(known.length)]!;
      user.exists.add(false);
      await expectStatus(await api.fetch(`/api/users/${user.id}`, { method: "DELETE", basic: ADMIN_BASIC }), "delete user", 204);
      user.exists = new Set([false]);
      model.acked++;
    }
  }
}
