/**
 * A {@link CredentialStore} in a JSON file of the usual `auths` shape
 * (`{"auths":{"host:port":{"auth":"base64(user:password)"}}}`), as written by
 * `podman login`, `skopeo login` and `docker login` (Node only). Writes are
 * atomic and the file is created with mode 0600.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { CredentialStore } from "./credentials.js";

interface AuthFile {
  auths?: Record<string, { auth?: string }>;
  [other: string]: unknown;
}

/** Keep logins in an `auths` JSON file at `path`. Other keys in the file are preserved. */
export function fileCredentialStore(path: string): CredentialStore {
  let lock: Promise<unknown> = Promise.resolve();
  const read = async (): Promise<AuthFile> => {
    try {
      return JSON.parse(await readFile(path, "utf8")) as AuthFile;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw error;
    }
  };
  const update = (change: (file: AuthFile) => void) => {
    const next = lock.then(async () => {
      const file = await read();
      file.auths ??= {};
      change(file);
      await mkdir(dirname(path), { recursive: true });
      const temp = `${path}.${randomUUID()}.tmp`;
      await writeFile(temp, JSON.stringify(file, null, 2), { mode: 0o600 });
      await rename(temp, path);
    });
    lock = next.catch(() => {});
    return next;
  };
  return {
    async get(registry) {
      return (await read()).auths?.[registry]?.auth;
    },
    set: (registry, auth) => update((file) => void (file.auths![registry] = { auth })),
    delete: (registry) => update((file) => void delete file.auths![registry]),
  };
}
