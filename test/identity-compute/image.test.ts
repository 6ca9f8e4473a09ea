import { describe, expect, it } from "vitest";
import { createImageService } from "../../examples/identity-compute/src/image.js";
import { DEMO_IMAGES } from "../../examples/identity-compute/src/app.js";
import { exampleApp, get, issue, ORIGIN } from "./helpers.js";

describe("image service", () => {
  it("answers version discovery at / (300), /versions and /v2 without a token", async () => {
    const { image } = await exampleApp();
    const root = await image(get("/image"));
    expect(root.status).toBe(300);
    expect((await root.json()).versions[0]).toMatchObject({ id: "v2.16", status: "CURRENT", links: [{ rel: "self", href: `${ORIGIN}/image/v2/` }] });
    expect((await image(get("/image/versions"))).status).toBe(200);
    const v2 = await image(get("/image/v2"));
    expect(v2.status).toBe(200);
    expect((await v2.json()).version.id).toBe("v2.16");
  });

  it("lists and shows images with a token; 401 without", async () => {
    const { image, identity } = await exampleApp();
    expect((await image(get("/image/v2/images"))).status).toBe(401);
    const { token } = await issue(identity, "demo");
    const body = await (await image(get("/image/v2/images", { "x-auth-token": token }))).json();
    expect(body.images).toHaveLength(1);
    expect(body.images[0]).toMatchObject({ id: DEMO_IMAGES[0]!.id, name: DEMO_IMAGES[0]!.name, status: "active", visibility: "public" });
    expect(body.first).toBe("/image/v2/images");
    const one = await image(get(`/image/v2/images/${DEMO_IMAGES[0]!.id}`, { "x-auth-token": token }));
    expect((await one.json()).name).toBe(DEMO_IMAGES[0]!.name);
    expect((await image(get("/image/v2/images/nope", { "x-auth-token": token }))).status).toBe(404);
  });

  it("hides other projects' private images and pages with limit/marker", async () => {
    const { identity, project } = await exampleApp();
    const { token } = await issue(identity, "demo");
    const image = createImageService({
      validateToken: identity.validateToken,
      images: [
        { id: "a", name: "mine", visibility: "private", owner: project.id },
        { id: "b", name: "theirs", visibility: "private", owner: "other" },
        { id: "c", name: "public" },
      ],
    });
    const names = async (q = "") =>
      (await (await image(get(`/v2/images${q}`, { "x-auth-token": token }))).json()).images.map((i: { name: string }) => i.name);
    expect(await names()).toEqual(["mine", "public"]);
    const page = await (await image(get("/v2/images?limit=1", { "x-auth-token": token }))).json();
    expect(page.images).toHaveLength(1);
    expect(page.next).toBe("/v2/images?limit=1&marker=a");
    expect(await names("?limit=1&marker=a")).toEqual(["public"]);
    expect((await image(get("/v2/images?marker=zzz", { "x-auth-token": token }))).status).toBe(400);
  });
});
