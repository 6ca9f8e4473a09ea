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

/**
 * Test files that need more than this process: radosgw, child processes
 * (SIGKILL trials, the CLI, tsc), a tmpfs mount, real servers on sockets, or
 * long stress runs. Everything else under test/ (but test/interop) is `unit`,
 * which test/setup/hermetic.ts keeps hermetic: a child process or a listening
 * socket there fails the test and points here.
 */
export const SYSTEM = [
  // radosgw (test/storage/helpers/rgw.ts)
  "test/storage/s3.test.ts",
  "test/storage/s3-driver.test.ts",
  "test/storage/s3-writer.test.ts",
  "test/storage/s3-quota.test.ts",
  "test/storage/s3-owned-chunks.test.ts",
  "test/storage/s3-requests.test.ts",
  "test/registry/verify-s3.test.ts",
  "test/audit/log-s3.test.ts",
  "test/concurrency/upload-race.test.ts",
  // Azurite, the Azure Blob emulator from npm (test/storage/helpers/azurite.ts)
  "test/storage/azure.test.ts",
  "test/storage/azure-driver.test.ts",
  "test/cli/serve-s3-bucket.test.ts",
  // the real CLI or server as a child process, killed with SIGKILL
  "test/crash/**/*.test.ts",
  "test/cli/bundle.test.ts",
  "test/cli/gc.test.ts",
  "test/cli/lifecycle.test.ts",
  "test/cli/serve.test.ts",
  "test/cli/serve-debug.test.ts",
  "test/cli/serve-tls.test.ts",
  "test/cli/verify.test.ts",
  "test/cli/audit.test.ts",
  "test/cli/verify-schedule.test.ts",
  // npm pack of a fresh checkout (prepack builds), the tarball unpacked and loaded by node and tsc
  "test/package/pack.test.ts",
  // tsc and tsx over the code blocks of the docs
  "test/docs/**/*.test.ts",
  // loopback webhook receivers (node:http)
  "test/events/notifier.test.ts",
  "test/events/notifier-s3.test.ts",
  // the bench's webhook sink (node:net on loopback)
  "test/bench/sink.test.ts",
  // openssl certificates, an https receiver and a child process with NODE_EXTRA_CA_CERTS
  "test/events/webhook-https.test.ts",
  "test/events/webhook-worker.test.ts",
  // a small tmpfs mounted for the full-disk cases, prlimit
  "test/storage/full-disk.test.ts",
  // real HTTP servers on 127.0.0.1 (serve(), node:http, Express, Hono)
  "test/adapters/**/*.test.ts",
  "test/cli/banner-server.test.ts",
  // the audit log and sign-in throttling on a real server, clients from 127.0.0.1 and 127.0.0.2, a webhook receiver
  "test/audit/server.test.ts",
  // a mock Fulcio and Rekor (@sigstore/mock) on 127.0.0.1 for keyless signing
  "test/trust/sigstore.test.ts",
  // stress and long fuzz: many concurrent pushes on the fs driver, random
  // operation sequences against a model on fs storage (~5-10 s each)
  "test/concurrency/push.test.ts",
  "test/fuzz/model.test.ts",
];

export const INTEROP = ["test/interop/**/*.test.ts"];

/** The suites that run only inside workerd (scripts/runtimes.mjs, test/workerd/vitest.config.ts). */
const WORKERD = ["test/workerd/**"];

export default defineConfig({
  resolve: { alias: publicNames },
  test: {
    projects: [
      {
        extends: true, // the root `resolve` above
        // Hermetic: in-process handlers, memory and fs storage, msw; under 30 s on 2 cores.
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...SYSTEM, ...INTEROP, ...WORKERD],
          setupFiles: ["test/setup/hermetic.ts"],
          // Both cores: vitest's default (cores - 1) runs one file at a time on 2.
          maxWorkers: 2,
          // The files of a worker share one module graph: src/ is imported once
          // a worker, not once a file (~15 s of CPU). So no test helper may keep
          // state at module level across files (test/users/helpers.ts makes a
          // leak ledger per file); hermetic.ts still runs before every file.
          isolate: false,
          testTimeout: 30_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        // radosgw, child processes, SIGKILLs, a tmpfs, real servers (see SYSTEM).
        test: {
          name: "system",
          include: SYSTEM,
          testTimeout: 120_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        // Real programs (skopeo, podman, buildah, docker-registry, openstack) on loopback.
        test: {
          name: "interop",
          include: INTEROP,
          testTimeout: 300_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
