/**
 * The command line as one file, `<outdir>/cli/registry-kit.cjs`, which
 * bin/registry-kit.mjs runs when it is built: registry-kit's modules and its
 * dependencies inlined, so that `registry-kit serve` resolves and compiles one
 * module at start instead of ~30 chunks and yaml's ~70 CommonJS files
 * (docs/performance.md, "Start-up"). A script rather than an ES module so
 * that `<outdir>/cli/code-cache.mjs` (src/cli/code-cache.ts, written beside
 * it) can run it with a V8 code cache, which Node 20 has no other way to keep
 * for user code. tsup.config.ts builds both after the ESM pass of the
 * library, whose subpath builds it leaves untouched.
 */
import { build, type Metafile, type Plugin } from "esbuild";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI_BUNDLE_PARAMETERS } from "../src/cli/code-cache.js";

const ENTRY = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
const LOADER = fileURLToPath(new URL("../src/cli/code-cache.ts", import.meta.url));

/** Dependencies left out of the bundle: imported with import() only when needed, so they stay lazy. */
export const CLI_BUNDLE_EXTERNAL = [
  // X.509 parsing and certificate generation: an x5c chain to verify, or keys made on the first start.
  "@peculiar/x509",
];

/**
 * Write `<outdir>/cli/registry-kit.cjs` and its loader `code-cache.mjs`, and
 * beside them THIRD-PARTY-LICENSES.txt with the license of every dependency
 * inlined into the bundle. Resolves to the
 * packages inlined (`name@version`) and what the file still imports.
 */
export async function bundleCli(outdir: string): Promise<{ inlined: string[]; imports: string[] }> {
  const result = await build({
    entryPoints: [ENTRY],
    outfile: join(outdir, "cli", "registry-kit.cjs"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: CLI_BUNDLE_EXTERNAL,
    // Less to scan at every start; identifiers are kept, so stack traces still name the functions.
    minifyWhitespace: true,
    minifySyntax: true,
    // The inlined dependencies' license comments, at the end of the file.
    legalComments: "eof",
    // The file is one function expression, which code-cache.mjs compiles as it is (no copy of the text
    // to wrap it) and calls with what a CommonJS module gets, and the bundle's own file URL.
    banner: { js: `(function (${CLI_BUNDLE_PARAMETERS.join(", ")}) {` },
    footer: { js: "})" },
    define: { "import.meta.url": "__rkImportMetaUrl" },
    // import() of the lazy externals as require(): a vm.Script has no module loader of its own.
    supported: { "dynamic-import": false },
    logLevel: "warning",
    metafile: true,
  });
  await build({
    entryPoints: [LOADER],
    outfile: join(outdir, "cli", "code-cache.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: "warning",
  });
  const inlined = writeLicenses(result.metafile, join(outdir, "cli", "THIRD-PARTY-LICENSES.txt"));
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  return { inlined, imports: [...new Set(imports)].sort() };
}

/** The inlined packages' license texts, read from their node_modules folders. */
function writeLicenses(metafile: Metafile, file: string): string[] {
  const dirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) dirs.add(m[1]!);
  }
  const inlined: string[] = [];
  const sections: string[] = [];
  for (const dir of [...dirs].sort()) {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; version: string; license?: string };
    const licenseFile = readdirSync(dir).find((f) => /^licen[sc]e/i.test(f));
    if (!licenseFile || !existsSync(join(dir, licenseFile))) throw new Error(`${pkg.name}: no LICENSE file to ship with the CLI bundle`);
    inlined.push(`${pkg.name}@${pkg.version}`);
    sections.push(`${pkg.name}@${pkg.version} (${pkg.license ?? "see below"})\n\n${readFileSync(join(dir, licenseFile), "utf8").trim()}\n`);
  }
  writeFileSync(file, `registry-kit.mjs (registry-kit's command line) contains the following packages.\n\n${sections.join("\n---\n\n")}`);
  return inlined;
}

/** For tsup's `esbuildPlugins`: bundles the CLI into the same outdir once the ESM pass succeeded. */
export function cliBundlePlugin(): Plugin {
  return {
    name: "registry-kit-cli-bundle",
    setup(builder) {
      builder.onEnd(async (result) => {
        const { format, outdir } = builder.initialOptions;
        if (format === "esm" && outdir && result.errors.length === 0) await bundleCli(outdir);
      });
    },
  };
}
