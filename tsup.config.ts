import { defineConfig } from "tsup";
import { cliBundlePlugin } from "./scripts/cli-bundle.js";

// One entry per subpath export in package.json. Node-only entries (node, server, storage/fs,
// storage/s3 when it uses node:, cli) are built the same way; the core never imports them.
const entry: Record<string, string> = {
  index: "src/index.ts",
  "registry/index": "src/registry/index.ts",
  "auth/index": "src/auth/index.ts",
  "users/index": "src/users/index.ts",
  "events/index": "src/events/index.ts",
  "storage/index": "src/storage/index.ts",
  "storage/memory/index": "src/storage/memory/index.ts",
  "storage/fs/index": "src/storage/fs/index.ts",
  "testing/index": "src/testing/index.ts",
  "storage/s3/index": "src/storage/s3/index.ts",
  "storage/r2/index": "src/storage/r2/index.ts",
  "storage/azure/index": "src/storage/azure/index.ts",
  "client/index": "src/client/index.ts",
  "node/index": "src/node/index.ts",
  "server/index": "src/server/index.ts",
  "ui/index": "src/ui/index.ts",
  "trust/index": "src/trust/index.ts",
  "cli/main": "src/cli/main.ts",
};

/**
 * The declarations: each library entry's .d.ts, which `npm run build` has tsc emit first
 * (tsconfig.build.json, into .tmp/dts/). Bundling declarations rather than sources keeps
 * tsup's dts pass from building a TypeScript program of its own (that cost 1.9 GB of RSS).
 */
const DTS_DIR = ".tmp/dts";
const dtsEntry = Object.fromEntries(
  Object.entries(entry)
    .filter(([name]) => name !== "cli/main") // the CLI is no library subpath
    .map(([name, source]) => [name, source.replace(/^src\//, `${DTS_DIR}/`).replace(/\.ts$/, ".d.ts")]),
);

export default defineConfig({
  entry,
  format: ["esm", "cjs"],
  dts: { entry: dtsEntry },
  sourcemap: false, // the tarball ships no maps: maps without their sources point nowhere
  clean: true,
  target: "node20",
  splitting: true,
  // Rollup's pass over each output file: an entry's bare `import "./chunk-….js"` (esbuild keeps the
  // evaluation order of chunks it needs nothing from) goes, since the package has no side effects
  // ("sideEffects": false); bundlers of the package's users warned about each one they dropped.
  treeshake: { moduleSideEffects: (id: string, external: boolean) => !(external && /^\.{1,2}\/(?:\.\.\/)*chunk-[\w-]+\.c?js$/.test(id)) },
  // Then the CLI as one file, dist/cli/registry-kit.cjs, and its loader (scripts/cli-bundle.ts).
  esbuildPlugins: [cliBundlePlugin()],
});
