import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests import example sources, which import the package by its public names
// (`registry-kit/server`, ...): resolve those to the sources, as tsconfig.json's
// `paths` does, so no build of dist/ is needed.
const src = fileURLToPath(new URL("./src/", import.meta.url));
const publicNames = [
  { find: /^registry-kit$/, replacement: `${src}index.ts` },
  { find: /^registry-kit\/(.+)$/, replacement: `${src}$1/index.ts` },
];

export default defineConfig({
  resolve: { alias: publicNames },
  test: {
    projects: [
      {
        extends: true, // the root `resolve` above
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/interop/**"],
          testTimeout: 30_000,
        },
      },
      {
        extends: true, // the root `resolve` above
        // Real programs (skopeo, podman, docker-registry, openstack) on loopback.
        test: {
          name: "interop",
          include: ["test/interop/**/*.test.ts"],
          testTimeout: 300_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
