/**
 * The web page in a real browser: Debian's Chromium, headless, driven by
 * playwright-core, against `registry-kit serve` on loopback with an image
 * pushed by skopeo whose labels carry HTML and JavaScript. An administrator
 * signs in, browses the image, copies its pull command, deletes a tag and
 * creates a user, who then signs in and sees only what they may pull. axe-core
 * checks every page for serious accessibility violations. Screenshots go to
 * $RK_UI_SCREENSHOTS when set (docs/ui.md's images were made so).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestImage, type TestImage } from "./helpers/image.js";
import { describeRun, freePort, requireTool, tempDir, type Background } from "./helpers/process.js";
import { startOnConfig, writeConfig } from "./helpers/same-config.js";
import { skopeoSandbox, type SkopeoSandbox } from "./helpers/skopeo.js";

const ADMIN = { username: "admin", password: "Adm1nUiPassword" };
const HOSTILE = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const SHOTS = process.env.RK_UI_SCREENSHOTS;

describe("the web page in headless Chromium", () => {
  const work = tempDir("ui-browser");
  let server: Background | undefined;
  let browser: Browser | undefined;
  let skopeo: SkopeoSandbox;
  let url = "";
  let host = "";
  let img: TestImage;

  beforeAll(async () => {
    const chromiumPath = requireTool("chromium");
    skopeo = skopeoSandbox();
    const port = await freePort();
    host = `127.0.0.1:${port}`;
    url = `http://${host}`;
    const config = writeConfig(work.path, {
      version: 0.1,
      http: { addr: host },
      storage: { filesystem: { rootdirectory: join(work.path, "data") }, delete: { enabled: true } },
      registrykit: { keydirectory: join(work.path, "keys"), tokenservice: {}, users: { admin: ADMIN } },
    });
    // Ready once the registry challenges (it answers 503 while it starts).
    server = await startOnConfig("registry-kit", config, work.path, async () => (await fetch(`${url}/v2/`).then(async (r) => (await r.arrayBuffer(), r.status))) === 401);
    img = buildTestImage(join(work.path, "img"), { labels: { "org.opencontainers.image.title": HOSTILE, "org.opencontainers.image.description": "an image for the UI test" } });
    for (const tag of ["v1", "old"]) {
      const push = await skopeo.copy(img.ref, `docker://${host}/admin/app:${tag}`, { destCreds: ADMIN });
      expect(push.code, describeRun(push)).toBe(0);
    }
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox"] });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    skopeo?.remove();
    work.remove();
  });

  /** A fresh browser context (own cookies) with clipboard access, signed in as `user`. */
  async function signedIn(user: { username: string; password: string }): Promise<Page> {
    const context = await browser!.newContext({ baseURL: url });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
    const page = await context.newPage();
    page.on("dialog", (dialog) => void dialog.dismiss());
    await page.goto("/ui/");
    await expect.poll(() => page.url()).toContain("/ui/sign-in");
    await page.getByLabel("User name").fill(user.username);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${url}/ui/`);
    return page;
  }

  /** axe-core on the page: the serious and critical violations (none expected). */
  async function seriousViolations(page: Page): Promise<string[]> {
    // Evaluated through the DevTools protocol: the page's CSP forbids inline scripts, and rightly.
    await page.evaluate(AXE);
    const result = await page.evaluate(async () => (globalThis as unknown as { axe: { run(): Promise<{ passes: unknown[]; violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run());
    // axe really looked: a page of ours passes dozens of its rules.
    expect(result.passes.length).toBeGreaterThan(10);
    return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.nodes.length})`);
  }

  async function shot(page: Page, name: string): Promise<void> {
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  it("an administrator signs in, browses the pushed image and copies its pull command; hostile labels stay text", async () => {
    const page = await signedIn(ADMIN);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, "ui-repositories");
    await page.getByRole("link", { name: "admin/app" }).click();
    await expect.poll(() => page.locator("table tbody tr").count()).toBe(2);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, "ui-tags");
    await page.getByRole("link", { name: "v1", exact: true }).click();
    await page.getByRole("heading", { name: "Layers" }).waitFor();
    expect(await page.locator("dd.mono").first().textContent()).toBe(img.manifestDigest);
    // The hostile label is shown as text, and nothing of it ran.
    await expect.poll(() => page.getByText(HOSTILE, { exact: true }).count()).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator("img").count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, "ui-image");
    await page.getByRole("button", { name: "Copy the podman command" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(`podman pull ${host}/admin/app:v1`);
    await page.context().close();
  });

  it("an administrator deletes a tag and creates a user, who signs in and sees only what they may pull", async () => {
    const page = await signedIn(ADMIN);
    await page.goto("/ui/repository?name=admin%2Fapp");
    await page.getByRole("button", { name: "Delete tag old" }).click();
    await page.getByText("Tag deleted.").waitFor();
    expect(await page.getByRole("link", { name: "old", exact: true }).count()).toBe(0);
    const gone = await skopeo.inspect(`docker://${host}/admin/app:old`, { creds: ADMIN });
    expect(gone.code).not.toBe(0);

    await page.getByRole("link", { name: "Users" }).click();
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, "ui-users");
    await page.getByLabel("User name").fill("erin");
    await page.getByLabel("Email").fill("erin@example.test");
    await page.getByLabel("Password", { exact: true }).fill("Er1nPassword");
    await page.getByRole("button", { name: "Create user" }).click();
    await page.getByText("User created.").waitFor();
    await page.context().close();

    const erin = { username: "erin", password: "Er1nPassword" };
    const push = await skopeo.copy(img.ref, `docker://${host}/erin/tool:v1`, { destCreds: erin });
    expect(push.code, describeRun(push)).toBe(0);
    const erinPage = await signedIn(erin);
    const names = await erinPage.locator("table tbody a").allTextContents();
    expect(names).toEqual(["erin/tool"]);
    expect(await erinPage.getByRole("link", { name: "Users" }).count()).toBe(0);
    await erinPage.context().close();
  });
});
