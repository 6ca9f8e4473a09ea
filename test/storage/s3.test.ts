/**
 * The storage contract suite against a real S3 server (Ceph radosgw on loopback).
 * Every test gets a fresh root directory in one bucket; the server is started
 * once for the file. Needs radosgw installed: the test fails with a hint otherwise.
 */
import { s3Storage } from "../../src/storage/s3/index.js";
import { describeStorageContract } from "../../src/testing/index.js";
import { freshRoot, useRadosgw } from "./helpers/rgw.js";

const MiB = 1024 * 1024;
const rgw = useRadosgw();

describeStorageContract(
  "s3 (radosgw)",
  async () => {
    const root = freshRoot("contract");
    return {
      driver: s3Storage({ ...rgw.options(), rootDirectory: root }),
      cleanup: async () => {
        // Free the server's memory (memstore) between tests.
        await s3Storage(rgw.options()).deletePrefix(root);
      },
    };
  },
  {
    largeBytes: 256 * MiB,
    redirect: true,
    onLargeStreamStats: (s) =>
      console.log(`[s3 contract] ${s.phase} ${Math.round(s.bytes / MiB)} MiB: ${((s.bytesPerSecond) / MiB).toFixed(0)} MiB/s, rss +${(s.rssGrowth / MiB).toFixed(1)} MiB`),
  },
);
