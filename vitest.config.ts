import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/interop/**"],
          testTimeout: 30_000,
        },
      },
      {
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
