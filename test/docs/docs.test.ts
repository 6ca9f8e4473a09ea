/**
 * Keeps the guides honest:
 * - every relative link in README.md and docs/*.md points at a file that exists;
 * - every `registry-kit/<subpath>` a guide names is an export of package.json;
 * - every ```ts block in the guides whose first line is `// runnable` type-checks
 *   and runs (with `registry-kit/*` imports mapped to the sources).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const docsDir = path.join(root, "docs");
const guides = [
  path.join(root, "README.md"),
  ...readdirSync(docsDir)
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join(docsDir, f)),
];
const rel = (file: string) => path.relative(root, file);
const read = (file: string) => readFileSync(file, "utf8");

/** The text outside fenced code blocks. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** Fenced code blocks: info string and body. */
function codeBlocks(markdown: string): { info: string; body: string }[] {
  const blocks: { info: string; body: string }[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```\s*$/gm;
  for (let m = fence.exec(markdown); m; m = fence.exec(markdown)) blocks.push({ info: m[1]!.trim(), body: m[2]! });
  return blocks;
}

describe("docs: relative links", () => {
  it.each(guides.map((g) => [rel(g), g]))("%s links only to files that exist", (_name, file) => {
    const broken: string[] = [];
    const link = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
    for (const m of prose(read(file)).matchAll(link)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue; // URLs, mailto:, same-page anchors
      const pathPart = decodeURIComponent(target.split("#")[0]!.split("?")[0]!);
      if (!existsSync(path.resolve(path.dirname(file), pathPart))) broken.push(target);
    }
    expect(broken, `broken links in ${rel(file)}`).toEqual([]);
  });
});

describe("docs: package subpaths", () => {
  const pkg = JSON.parse(read(path.join(root, "package.json"))) as { exports: Record<string, unknown> };
  const exported = new Set(Object.keys(pkg.exports));

  it.each(guides.map((g) => [rel(g), g]))("%s names only exported subpaths", (_name, file) => {
    const unknown = new Set<string>();
    for (const m of read(file).matchAll(/["'`]registry-kit(\/[A-Za-z0-9_./-]+?)?["'`]/g)) {
      const subpath = `.${m[1] ?? ""}`;
      if (!exported.has(subpath)) unknown.add(`registry-kit${m[1] ?? ""}`);
    }
    expect([...unknown], `not in package.json exports, named in ${rel(file)}`).toEqual([]);
  });
});

describe("docs: runnable examples", () => {
  const runnable = guides.flatMap((file) =>
    codeBlocks(read(file))
      .filter((b) => /^(ts|typescript)$/.test(b.info) && b.body.trimStart().startsWith("// runnable"))
      .map((b, i) => ({ name: `${rel(file)} #${i + 1}`, body: b.body })),
  );
  const outDir = path.join(root, ".tmp", "docs-examples");

  /** Map `registry-kit` and `registry-kit/<sub>` imports onto the sources, so no build is needed. */
  function toSources(body: string): string {
    return body.replace(/(["'])registry-kit(\/[A-Za-z0-9_/-]+)?\1/g, (_m, q: string, sub: string | undefined) => {
      const file = sub ? path.join(root, "src", sub, "index.ts") : path.join(root, "src", "index.ts");
      return `${q}${file}${q}`;
    });
  }

  it("the token guide has runnable examples, the policy unit test among them", () => {
    const tokenAuth = runnable.filter((r) => r.name.startsWith("docs/token-auth.md"));
    expect(tokenAuth.length).toBeGreaterThanOrEqual(3);
    expect(tokenAuth.some((r) => r.body.includes("aclPolicy("))).toBe(true);
  });

  const files: string[] = [];
  if (runnable.length > 0) {
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    runnable.forEach((r, i) => {
      const file = path.join(outDir, `example-${i + 1}.ts`);
      writeFileSync(file, `// ${r.name}\n${toSources(r.body)}\nexport {};\n`);
      files.push(file);
    });
  }

  it("type-check", () => {
    const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
    const args = [
      tsc, "--noEmit", "--strict", "--skipLibCheck", "--allowImportingTsExtensions",
      "--target", "ES2022", "--module", "NodeNext", "--moduleResolution", "NodeNext",
      "--lib", "ES2023,DOM,DOM.Iterable", "--types", "node", ...files,
    ];
    try {
      execFileSync(process.execPath, args, { cwd: root, encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      expect.fail(`runnable examples do not type-check:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
    }
  }, 120_000);

  it.each(runnable.map((r, i) => [r.name, i]))("%s runs and exits 0", (_name, i) => {
    const tsx = path.join(root, "node_modules", "tsx", "dist", "cli.mjs");
    try {
      execFileSync(process.execPath, [tsx, files[i as number]!], { cwd: root, encoding: "utf8", stdio: "pipe", timeout: 60_000 });
    } catch (error) {
      const e = error as { status?: number; stdout?: string; stderr?: string };
      expect.fail(`exit ${e.status}:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
    }
  }, 90_000);
});
