/**
 * Issue "Management service", done-when: a user created through
 * `POST /api/users` pushes with skopeo through the token flow; after an
 * administrator deletes that user, the next token request fails.
 *
 * The real CLI (`node bin/registry-kit.mjs serve`, built-in defaults on
 * 127.0.0.1:<free port>, data in a temp dir):
 *
 * - the administrator creates frank; frank pushes `frank/app-<id>` with
 *   skopeo and the manifest comes back byte for byte;
 * - the administrator deletes frank (DELETE /api/users/{id} → 204); then a
 *   direct token request with frank's Basic credentials is 401 with the token
 *   service's JSON error, and `skopeo copy` as frank fails with that message;
 * - revoke-admin: the administrator toggles grace's sysadmin flag on and off
 *   (PUT /api/users/{id}/sysadmin) and the `access` granted in grace's next
 *   token changes accordingly (and so does what skopeo may push for her).
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jwtPayload, requestToken, startAllInOne, usersApi, type AllInOneProcess } from "./helpers/all-in-one.js";
import { buildTestImage, readOciLayout, type TestImage } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const admin = { username: "admin", password: "Adm1n-Lifecycle-Pass" };
const frank = { username: "frank", password: "Fr4nk-Lifecycle-Pass" };
const grace = { username: "grace", password: "Gr4ce-Lifecycle-Pass" };
const SERVICE = "registry-kit";
/** The token service's answer to bad or missing credentials (src/auth/token-service/token-service.ts). */
const UNAUTHORIZED = { error: "unauthorized", details: "bad or missing credentials" };

describe("users lifecycle through the all-in-one server: create, push, delete, revoke", () => {
  const work = tempDir("users-lifecycle");
  const id = randomBytes(3).toString("hex");
  let server: AllInOneProcess | undefined;
  let skopeo: SkopeoSandbox;
  let img: TestImage;
  let frankId = 0;

  beforeAll(async () => {
    skopeo = skopeoSandbox();
    img = buildTestImage(join(work.path, "src"), { sizes: [2048, 40_000] });
    server = await startAllInOne({
      cwd: work.path,
      env: { HOST: "127.0.0.1", PORT: "0", REGISTRY_KIT_DATA: join(work.path, "data"), REGISTRY_KIT_ADMIN_PASSWORD: admin.password },
    });
  });
  afterAll(async () => {
    await server?.stop();
    skopeo?.remove();
    work.remove();
  });

  const log = () => server!.log();

  it("a user created through POST /api/users pushes with skopeo through the token flow", async () => {
    frankId = await usersApi(server!.url, admin).create(frank);
    const dest = `docker://${server!.host}/frank/app-${id}:v1`;
    const push = await skopeo.copy(img.ref, dest, { destCreds: frank });
    expect(push.code, `${describeRun(push)}\n${log()}`).toBe(0);
    expect((await skopeo.inspectRaw(dest, { creds: frank })).equals(img.manifestBytes)).toBe(true);
    const back = join(work.path, "frank-back");
    const pull = await skopeo.copy(dest, `oci:${back}:v1`, { srcCreds: frank });
    expect(pull.code, describeRun(pull)).toBe(0);
    expect(readOciLayout(back, "v1").manifestDigest).toBe(img.manifestDigest);
  });

  it("after the administrator deletes the user, the next token request fails: 401 JSON, and skopeo prints it", async () => {
    const scope = `repository:frank/app-${id}:pull,push`;
    const before = await requestToken(server!.url, { service: SERVICE, scope, creds: frank });
    expect(before.status).toBe(200);
    expect(jwtPayload(before.token!).sub).toBe("frank");

    const del = await usersApi(server!.url, admin).remove(frankId);
    expect(del.status, del.text).toBe(204);

    const after = await requestToken(server!.url, { service: SERVICE, scope, creds: frank });
    expect(after.status).toBe(401);
    expect(after.contentType).toMatch(/^application\/json/);
    expect(after.body).toEqual(UNAUTHORIZED);
    // frank is gone from the management API too
    expect((await usersApi(server!.url, frank).call("GET", "/current")).status).toBe(401);

    const again = buildTestImage(join(work.path, "again"), { layers: 1 });
    const push = await skopeo.copy(again.ref, `docker://${server!.host}/frank/app-${id}:v2`, { destCreds: frank });
    expect(push.code, describeRun(push)).not.toBe(0);
    // containers/image reports a 401 from the token endpoint as "invalid username/password", followed by the body's text
    expect(push.stderr, describeRun(push)).toContain("invalid username/password");
    expect(push.stderr, describeRun(push)).toContain(UNAUTHORIZED.details);
    const pull = await skopeo.copy(`docker://${server!.host}/frank/app-${id}:v1`, `oci:${join(work.path, "frank-no")}:v1`, { srcCreds: frank });
    expect(pull.code, describeRun(pull)).not.toBe(0);
    expect(pull.stderr).toContain(UNAUTHORIZED.details);
  });

  it("revoke-admin: toggling sysadmin changes the access granted in the user's next token", async () => {
    const api = usersApi(server!.url, admin);
    const graceId = await api.create(grace);
    const repo = `team-${id}/app`;
    const scope = `repository:${repo}:pull,push`;
    const granted = async () => {
      const t = await requestToken(server!.url, { service: SERVICE, scope, creds: grace });
      expect(t.status, JSON.stringify(t.body)).toBe(200);
      const claims = jwtPayload(t.token!);
      expect(claims.sub).toBe("grace");
      return claims.access ?? [];
    };
    const pushAsGrace = (tag: string) => {
      const image = buildTestImage(join(work.path, `grace-${tag}`), { layers: 1 });
      return skopeo.copy(image.ref, `docker://${server!.host}/${repo}:${tag}`, { destCreds: grace });
    };

    // a plain user: nothing outside grace/*
    expect(await granted()).toEqual([]);

    const on = await api.setSysadmin(graceId, true);
    expect(on.status, on.text).toBe(200);
    expect(on.json().sysadmin_flag).toBe(true);
    expect(await granted()).toEqual([{ type: "repository", name: repo, actions: ["pull", "push"] }]);
    const ok = await pushAsGrace("admin");
    expect(ok.code, `${describeRun(ok)}\n${log()}`).toBe(0);

    const off = await api.setSysadmin(graceId, false);
    expect(off.status, off.text).toBe(200);
    expect(off.json().sysadmin_flag).toBe(false);
    expect(await granted()).toEqual([]);
    const denied = await pushAsGrace("revoked");
    expect(denied.code, describeRun(denied)).not.toBe(0);
    expect(denied.stderr).toContain("denied: requested access to the resource is denied");
  });
});
