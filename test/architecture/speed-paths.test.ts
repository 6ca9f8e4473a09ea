/**
 * The adapter's speed paths reach the core through one typed capability,
 * declared in src/runtime/adapter-capabilities.ts (issue 42): no other module
 * outside the adapter (src/node) keys a mark by a registered symbol or keeps a
 * module-level WeakSet of marked objects.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");
const CAPABILITIES = "runtime/adapter-capabilities.ts";

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

/** The lines of `text` that declare a mark: a registered symbol, or a WeakSet kept at module level. */
function markDeclarations(text: string): string[] {
  return text.split("\n").filter((line) => /Symbol\.for\(/.test(line) || /^(export )?(const|let) \w+ = new WeakSet\b/.test(line));
}

describe("the adapter's speed paths (docs/performance.md)", () => {
  it("are declared in one module, outside src/node", () => {
    const elsewhere: string[] = [];
    for (const path of sourceFiles(SRC)) {
      const file = relative(SRC, path).split(sep).join("/");
      if (file === CAPABILITIES || file.startsWith("node/")) continue;
      for (const line of markDeclarations(readFileSync(path, "utf8"))) elsewhere.push(`src/${file}: ${line.trim()}`);
    }
    expect(elsewhere, "declare a speed path as a capability in src/runtime/adapter-capabilities.ts").toEqual([]);
  });

  it("finds a mark declared elsewhere", () => {
    expect(markDeclarations('const BASICS = Symbol.for("registry-kit.x");\nconst readers = new WeakSet<Request>();\n')).toHaveLength(2);
    expect(markDeclarations("const seen = new Map();\n  const local = new WeakSet();\n")).toEqual([]);
  });
});
