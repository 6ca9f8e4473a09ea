import fs, { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KEY_FILES, generatePassword, loadOrCreateSigningKey, loadOrCreateUploadSecret, resolveUploadSecret } from "../../src/server/all-in-one/key-material.js";

const dirs: string[] = [];
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), "rk-keys-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("key material on first start and after a crash", () => {
  it("creates the key with its certificate inside, a separate certificate file, mode 0600, and no temp files", async () => {
    const dir = fresh();
    const first = await loadOrCreateSigningKey(dir);
    expect(first.created).toBe(true);
    const keyText = readFileSync(join(dir, KEY_FILES.privateKey), "utf8");
    expect(keyText).toContain("-----BEGIN PRIVATE KEY-----");
    expect(keyText).toContain("-----BEGIN CERTIFICATE-----");
    expect(readFileSync(join(dir, KEY_FILES.certificate), "utf8")).toBe(first.value.certificate);
    expect(statSync(join(dir, KEY_FILES.privateKey)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    const again = await loadOrCreateSigningKey(dir);
    expect(again.created).toBe(false);
    expect(again.value).toEqual(first.value);
  });

  it("rewrites a missing or altered certificate file from the key file (a crash between the two writes)", async () => {
    const dir = fresh();
    const first = await loadOrCreateSigningKey(dir);
    unlinkSync(join(dir, KEY_FILES.certificate));
    expect((await loadOrCreateSigningKey(dir)).value.certificate).toBe(first.value.certificate);
    writeFileSync(join(dir, KEY_FILES.certificate), "garbage");
    await loadOrCreateSigningKey(dir);
    expect(readFileSync(join(dir, KEY_FILES.certificate), "utf8")).toBe(first.value.certificate);
  });

  it("regenerates an empty upload secret or key file left by a crash during creation", async () => {
    const dir = fresh();
    writeFileSync(join(dir, KEY_FILES.uploadSecret), "");
    const secret = await loadOrCreateUploadSecret(dir);
    expect(secret.created).toBe(true);
    expect(secret.value).toMatch(/^[0-9a-f]{64}$/);
    writeFileSync(join(dir, KEY_FILES.privateKey), "");
    expect((await loadOrCreateSigningKey(dir)).created).toBe(true);
  });

  it("two processes starting at once agree on one secret and one key", async () => {
    const dir = fresh();
    const secrets = await Promise.all([1, 2, 3, 4].map(() => loadOrCreateUploadSecret(dir)));
    expect(new Set(secrets.map((s) => s.value)).size).toBe(1);
    expect(secrets.filter((s) => s.created).length).toBe(1);
    const keys = await Promise.all([1, 2, 3].map(() => loadOrCreateSigningKey(dir)));
    expect(new Set(keys.map((k) => k.value.privateKey)).size).toBe(1);
    expect(new Set(keys.map((k) => k.value.certificate)).size).toBe(1);
  });
});

describe("generatePassword", () => {
  it("meets the password policy and never starts with '-' (a command line would take it for an option)", () => {
    // One draw in 64 starts with '-': 20,000 passwords make a miss of the check all but impossible.
    const passwords = Array.from({ length: 20_000 }, generatePassword);
    expect(passwords.filter((p) => p.startsWith("-"))).toEqual([]);
    expect(passwords.filter((p) => !/^[A-Za-z0-9_-]{24}$/.test(p) || !/[A-Z]/.test(p) || !/[a-z]/.test(p) || !/[0-9]/.test(p))).toEqual([]);
    expect(new Set(passwords).size).toBe(passwords.length);
  });
});

describe("the upload secret a server runs with (issue 43: no writable ./data needed)", () => {
  /** Make every mkdir fail as it does for an unprivileged user under `/`. */
  function deniedMkdir(code: string) {
    return vi.spyOn(fs.promises, "mkdir").mockRejectedValue(Object.assign(new Error(`${code}: permission denied, mkdir '/data'`), { code }));
  }
  afterEach(() => vi.restoreAllMocks());

  it("is http.secret when configured, touching no directory", async () => {
    const mkdir = deniedMkdir("EACCES");
    expect(await resolveUploadSecret("s3cret", "/nowhere/keys", false)).toEqual({ value: "s3cret", source: "config", created: false });
    expect(mkdir).not.toHaveBeenCalled();
  });

  it("is kept in the key directory when it can be written", async () => {
    const dir = fresh();
    const secret = await resolveUploadSecret(undefined, dir, true);
    expect(secret).toMatchObject({ source: "file", file: join(dir, KEY_FILES.uploadSecret), created: true });
    expect(readFileSync(join(dir, KEY_FILES.uploadSecret), "utf8")).toBe(secret.value);
  });

  it("is random and in memory when an optional key directory cannot be written (EACCES, EPERM, EROFS)", async () => {
    for (const code of ["EACCES", "EPERM", "EROFS"]) {
      deniedMkdir(code);
      const secret = await resolveUploadSecret(undefined, join(fresh(), "missing"), true);
      expect(secret).toMatchObject({ source: "memory", created: true, reason: `${code}: permission denied, mkdir '/data'` });
      expect(secret.value).toMatch(/^[0-9a-f]{64}$/);
      vi.restoreAllMocks();
    }
  });

  it("is an error naming http.secret and registrykit.keydirectory when the directory was chosen", async () => {
    deniedMkdir("EACCES");
    await expect(resolveUploadSecret(undefined, "/srv/keys", false)).rejects.toThrow(
      "cannot keep the upload secret in /srv/keys: EACCES: permission denied, mkdir '/data'; set http.secret (REGISTRY_HTTP_SECRET) to a secret shared by every process, or registrykit.keydirectory (REGISTRY_KIT_DATA) to a writable directory",
    );
  });

  it("is an error, even when optional, for a failure other than permissions (a file where the directory should be)", async () => {
    const dir = fresh();
    writeFileSync(join(dir, "file"), "x");
    await expect(resolveUploadSecret(undefined, join(dir, "file", "keys"), true)).rejects.toThrow(/cannot keep the upload secret in .*ENOTDIR.*set http\.secret/);
  });
});
