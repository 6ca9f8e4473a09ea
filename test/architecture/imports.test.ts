/**
 * The import rules of docs/architecture.md, checked on every `import`,
 * `export … from` and `import(…)` under src/. A failure lists each offending
 * file, what it imports and the rule it breaks.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

/** The foundations, bottom first; each may import only the ones listed for it. */
const FOUNDATIONS: Record<string, readonly string[]> = {
  util: [],
  runtime: ["util"],
  oci: ["util", "runtime"],
  http: ["util", "runtime", "oci"],
  storage: ["util", "runtime"],
  events: ["util", "runtime", "http", "storage"],
};
const FOUNDATION_NAMES = Object.keys(FOUNDATIONS);

/** The files of `auth/` that the registry and users services may import (auth's shared vocabulary). */
const AUTH_VOCABULARY = new Set(["auth/access.ts", "auth/principal.ts", "auth/binding.ts"]);

/** Parts that compose the others and may import any part except `cli/`. */
const COMPOSITION = new Set(["node", "server", "cli", "testing", "(root)"]);

/** Where `node:` modules may be imported statically (import rule 3). */
function mayImportNode(file: string): boolean {
  return /^(node|cli|server|testing|storage\/fs)\//.test(file) || file.endsWith(".node.ts");
}

/** Packages that only the test-support subpath may import (`testing/`), and frameworks nobody under src/ may. */
const FRAMEWORKS = /^(express|hono|@hono\/|koa|fastify)(\/|$)/;

interface ImportEdge {
  /** The importing file, relative to src/ with `/` separators. */
  file: string;
  /** The specifier as written. */
  specifier: string;
  /** The imported file relative to src/, for relative specifiers. */
  target?: string;
}

/** The part of a file: its first folder under src/, or `(root)` for src/index.ts. */
function partOf(file: string): string {
  const slash = file.indexOf("/");
  return slash < 0 ? "(root)" : file.slice(0, slash);
}

/** Why `edge` breaks a rule, or `undefined` when it is allowed. */
function violation(edge: ImportEdge): string | undefined {
  const from = partOf(edge.file);
  const spec = edge.specifier;
  if (spec.startsWith("node:")) {
    return mayImportNode(edge.file) ? undefined : "rule 3: only node/, cli/, server/, testing/, storage/fs/ and *.node.ts may import node: modules statically";
  }
  if (!edge.target) {
    if (FRAMEWORKS.test(spec)) return "rule 4: no web framework under src/";
    if ((spec === "vitest" || spec.startsWith("vitest/")) && from !== "testing") return "only testing/ may import vitest";
    return undefined;
  }
  const to = partOf(edge.target);
  if (from === to) return undefined;
  if (to === "cli") return "rule 1: nothing imports cli/";
  if (COMPOSITION.has(from)) return undefined;
  if (from in FOUNDATIONS) {
    const allowed = FOUNDATIONS[from]!;
    if (allowed.includes(to)) return undefined;
    return `rule 1: ${from}/ may import ${allowed.length > 0 ? `only ${allowed.join(", ")}` : "no other part"}`;
  }
  if (FOUNDATION_NAMES.includes(to)) return undefined;
  if ((from === "registry" || from === "users") && AUTH_VOCABULARY.has(edge.target)) return undefined;
  switch (from) {
    case "auth":
    case "client":
    case "audit": // the audit log and its auditor (issue 45)
    case "throttle": // sign-in throttling (issue 45)
    case "trust":
      return `rule 1: ${from}/ may import only the foundations (${FOUNDATION_NAMES.join(", ")})`;
    case "ui":
      // The web page sits above the services it shows (it calls their handlers).
      return ["auth", "registry", "users"].includes(to) ? undefined : "rule 1: ui/ may import the foundations, auth/, registry/ and users/";
    case "registry":
    case "users":
      return `rule 2: ${from}/ may import only the foundations and auth's shared vocabulary (${[...AUTH_VOCABULARY].join(", ")})`;
    default:
      return `rule 1: ${from}/ is not in the layer table of this test; add it and to docs/architecture.md`;
  }
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

/** Every import of every file under src/ (static, re-exports, `import(…)` calls and types). */
function importsUnder(src: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const path of sourceFiles(src)) {
    const file = relative(src, path).split(sep).join("/");
    const { importedFiles } = ts.preProcessFile(readFileSync(path, "utf8"), true, true);
    for (const { fileName: specifier } of importedFiles) {
      const target = specifier.startsWith(".")
        ? relative(src, resolve(dirname(path), specifier)).split(sep).join("/").replace(/\.js$/, ".ts")
        : undefined;
      edges.push({ file, specifier, target });
    }
  }
  return edges;
}

/** The files each file under src/ imports (every kind of import, type-only ones too), by path relative to src/. */
function importGraph(edges: readonly ImportEdge[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const { file, target } of edges) {
    const targets = graph.get(file) ?? new Set<string>();
    graph.set(file, targets);
    if (target !== undefined) targets.add(target);
  }
  return graph;
}

/**
 * The import cycles of `graph`: its strongly connected components of more than
 * one file (or a file importing itself), each as sorted file names (Tarjan's
 * algorithm; iterative, so a deep chain cannot overflow the stack).
 */
function importCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ file: string; next: Iterator<string> }> = [];
    const enter = (file: string): void => {
      index.set(file, index.size);
      low.set(file, index.get(file)!);
      stack.push(file);
      onStack.add(file);
      work.push({ file, next: (graph.get(file) ?? new Set<string>()).values() });
    };
    enter(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const step = frame.next.next();
      if (!step.done) {
        const to = step.value;
        if (!graph.has(to)) continue; // not a source file (a missing one fails typecheck instead)
        if (!index.has(to)) enter(to);
        else if (onStack.has(to)) low.set(frame.file, Math.min(low.get(frame.file)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!));
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.file);
      if (component.length > 1 || graph.get(frame.file)!.has(frame.file)) cycles.push(component.sort());
    }
  }
  return cycles;
}

/**
 * Cycles that exist today and are being removed: each entry is one cycle's
 * exact set of files, so a cycle that grows, or any other one, still fails.
 */
const KNOWN_CYCLES: readonly (readonly string[])[] = [];

describe("import rules (docs/architecture.md)", () => {
  const edges = importsUnder(SRC);

  it("finds the imports it checks", () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges).toContainEqual({ file: "auth/verifier/challenge.ts", specifier: "../../oci/errors.js", target: "oci/errors.ts" });
  });

  it("every import goes downward", () => {
    const broken = edges.flatMap((edge) => {
      const why = violation(edge);
      return why ? [`src/${edge.file} imports "${edge.specifier}": ${why}`] : [];
    });
    expect(broken, `forbidden imports:\n${broken.join("\n")}`).toEqual([]);
  });

  it("no import cycles, type-only imports included", () => {
    const known = new Set(KNOWN_CYCLES.map((files) => [...files].sort().join(" ")));
    const cycles = importCycles(importGraph(edges))
      .map((files) => files.join(" "))
      .filter((cycle) => !known.has(cycle));
    expect(cycles, `import cycles (files that import each other, directly or around a loop):\n${cycles.join("\n")}`).toEqual([]);
  });

  it("the cycle check finds what it should", () => {
    const graph = (pairs: Record<string, string[]>) => new Map(Object.entries(pairs).map(([file, to]) => [file, new Set(to)]));
    expect(importCycles(graph({ a: ["b"], b: ["c"], c: ["a"], d: ["a"] }))).toEqual([["a", "b", "c"]]);
    expect(importCycles(graph({ a: ["a"], b: [] }))).toEqual([["a"]]);
    expect(importCycles(graph({ a: ["b", "c"], b: ["c"], c: [] }))).toEqual([]);
    expect(importCycles(graph({ a: ["b"], b: ["a"], c: ["d"], d: ["c", "x"] }))).toEqual([["a", "b"], ["c", "d"]]);
  });

  it("the rules refuse what they should", () => {
    const refused = (file: string, specifier: string, target?: string) => violation({ file, specifier, target });
    expect(refused("auth/verifier/challenge.ts", "../registry/errors.js", "registry/errors.ts")).toMatch(/rule 1/);
    expect(refused("client/verify.ts", "../registry/hash.js", "registry/hash.ts")).toMatch(/rule 1/);
    expect(refused("http/body.ts", "../storage/streams.js", "storage/streams.ts")).toMatch(/rule 1/);
    expect(refused("util/bytes.ts", "../oci/wire.js", "oci/wire.ts")).toMatch(/rule 1/);
    // The OCI vocabulary sits below the Request/Response helpers (issue 42).
    expect(refused("oci/errors.ts", "../http/in-memory-response.js", "http/in-memory-response.ts")).toMatch(/rule 1/);
    expect(refused("http/response.ts", "../oci/errors.js", "oci/errors.ts")).toBeUndefined();
    expect(refused("registry/index.ts", "../users/store.js", "users/store.ts")).toMatch(/rule 2/);
    expect(refused("registry/index.ts", "../auth/jwt.js", "auth/jwt/jwt.ts")).toMatch(/rule 2/);
    expect(refused("trust/keys.ts", "../auth/x509.js", "auth/x509.ts")).toMatch(/rule 1: trust\/ may import only the foundations/);
    expect(refused("trust/keys.ts", "../registry/index.js", "registry/index.ts")).toMatch(/rule 1/);
    expect(refused("trust/keys.ts", "../oci/digest.js", "oci/digest.ts")).toBeUndefined();
    expect(refused("node/serve.ts", "../cli/main.js", "cli/main.ts")).toMatch(/nothing imports cli/);
    expect(refused("registry/hash.ts", "node:crypto")).toMatch(/rule 3/);
    expect(refused("registry/index.ts", "hono")).toMatch(/rule 4/);
    expect(refused("registry/access.ts", "../auth/access.js", "auth/access.ts")).toBeUndefined();
    expect(refused("client/oci-layout.node.ts", "node:fs")).toBeUndefined();
    expect(refused("audit/log.ts", "../storage/driver.js", "storage/driver.ts")).toBeUndefined();
    expect(refused("audit/log.ts", "../users/store.js", "users/store.ts")).toMatch(/rule 1/);
    expect(refused("throttle/index.ts", "../auth/jwt.js", "auth/jwt.ts")).toMatch(/rule 1/);
    expect(refused("storage/fs/index.ts", "node:fs/promises")).toBeUndefined();
  });
});

/** registry/ files that compose the stores: they take the driver from the user and hand it to the storage level. */
const REGISTRY_COMPOSITION = new Set(["registry/index.ts", "registry/compose.ts", "registry/options.ts"]);
/** registry/ files whose public contract names the driver's type (a `WritePolicy` is handed the registry's driver). */
const DRIVER_IN_CONTRACT = new Set(["registry/policy/write-policy.ts", "registry/wrappers/write-policies.ts"]);

/**
 * The storage level (docs/stores.md): in registry/, only `stores/base/`
 * builds storage keys or calls the driver; handlers and features use the
 * stores.
 */
function storageLevelViolation(edge: ImportEdge): string | undefined {
  const { file, target } = edge;
  if (!target || !file.startsWith("registry/") || file.startsWith("registry/stores/base/")) return undefined;
  if (target === "registry/stores/base/layout.ts") return "storage level: only registry/stores/base/ knows storage keys";
  if (target === "storage/driver.ts" && !REGISTRY_COMPOSITION.has(file) && !DRIVER_IN_CONTRACT.has(file)) return "storage level: only registry/stores/base/ calls the driver";
  if (target.startsWith("registry/stores/base/") && !REGISTRY_COMPOSITION.has(file)) return "storage level: handlers and features call the stores, not the storage level's modules";
  return undefined;
}

describe("the storage level (docs/stores.md)", () => {
  const edges = importsUnder(SRC);

  it("only registry/stores/base/ imports the driver and the key layout", () => {
    const broken = edges.flatMap((edge) => {
      const why = storageLevelViolation(edge);
      return why ? [`src/${edge.file} imports "${edge.specifier}": ${why}`] : [];
    });
    expect(broken, `forbidden imports:\n${broken.join("\n")}`).toEqual([]);
  });

  it("refuses what it should", () => {
    const refused = (file: string, target: string) => storageLevelViolation({ file, specifier: target, target });
    expect(refused("registry/manifests.ts", "registry/stores/base/layout.ts")).toMatch(/storage keys/);
    expect(refused("registry/pull-through/blobs.ts", "storage/driver.ts")).toMatch(/calls the driver/);
    expect(refused("registry/blobs.ts", "registry/stores/base/storage-io.ts")).toMatch(/call the stores/);
    expect(refused("registry/stores/base/blobs.ts", "storage/driver.ts")).toBeUndefined();
    expect(refused("registry/compose.ts", "registry/stores/base/index.ts")).toBeUndefined();
  });
});
