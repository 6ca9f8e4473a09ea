import { defineConfig } from "tsup";
import { cliBundlePlugin } from "./scripts/cli-bundle.js";

// One entry per subpath export in package.json. Node-only entries (node, server, storage/fs,
// storage/s3 when it uses node:, cli) are built the same way; the core never imports them.
export default defineConfig({
  entry: {
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
    "client/index": "src/client/index.ts",
    "node/index": "src/node/index.ts",
    "server/index": "src/server/index.ts",
    "ui/index": "src/ui/index.ts",
    "trust/index": "src/trust/index.ts",
    "cli/main": "src/cli/main.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: false, // the tarball ships no maps: maps without their sources point nowhere
  clean: true,
  target: "node20",
  splitting: true,
  treeshake: true,
  // Then the CLI as one file, dist/cli/registry-kit.cjs, and its loader (scripts/cli-bundle.ts).
  esbuildPlugins: [cliBundlePlugin()],
});
