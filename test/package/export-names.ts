/**
 * The names a public subpath exports: its runtime names (the keys of the
 * module, as a consumer's `import * as m` sees them) and its type-only names
 * (read from the declarations of the subpath's `index.ts` with TypeScript's
 * parser, which is fast: no program, no type check).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = new URL("../../", import.meta.url);

/** `"."` → `src/index.ts`, `"./storage/fs"` → `src/storage/fs/index.ts`. */
export function sourceOf(subpath: string): string {
  return fileURLToPath(new URL(subpath === "." ? "src/index.ts" : `src/${subpath.slice(2)}/index.ts`, root));
}

interface PackageJson {
  exports: Record<string, unknown>;
  typesVersions?: Record<string, Record<string, string[]>>;
}

/** The package's `package.json`. */
export function packageJson(): PackageJson {
  return JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as PackageJson;
}

/** The public subpaths `package.json` declares (`./package.json` aside). */
export function publicSubpaths(): string[] {
  return Object.keys(packageJson().exports).filter((k) => k !== "./package.json");
}

/** Sorted runtime export names of a subpath's source. */
export async function runtimeNames(subpath: string): Promise<string[]> {
  const mod = (await import(sourceOf(subpath))) as Record<string, unknown>;
  return Object.keys(mod).sort();
}

function hasExport(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

/**
 * Sorted type-only export names of a subpath's `index.ts`: `export type { … }`,
 * `export { type … }`, and exported interfaces and type aliases. Throws on
 * `export *`, which would hide what is exported.
 */
export function typeNames(subpath: string): string[] {
  const file = sourceOf(subpath);
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const names: string[] = [];
  for (const node of sf.statements) {
    if (ts.isExportDeclaration(node)) {
      if (!node.exportClause) throw new Error(`${file}: export * hides what is exported; list the names`);
      if (!ts.isNamedExports(node.exportClause)) throw new Error(`${file}: export * as … is not pinned; list the names`);
      for (const s of node.exportClause.elements) if (node.isTypeOnly || s.isTypeOnly) names.push(s.name.text);
    } else if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && hasExport(node)) {
      names.push(node.name.text);
    }
  }
  return names.sort();
}
