/**
 * verifyBlobs on the S3 driver, against a real S3 server (Ceph radosgw on
 * loopback): the same cases as on memory and fs. Needs radosgw installed: the
 * test fails with a hint otherwise.
 */
import { s3Storage } from "../../src/storage/s3/index.js";
import { freshRoot, useRadosgw } from "../storage/helpers/rgw.js";
import { describeVerifyCases } from "./verify-cases.js";

const rgw = useRadosgw();

describeVerifyCases("s3 (radosgw)", async () => {
  const root = freshRoot("verify");
  return {
    storage: s3Storage({ ...rgw.options(), rootDirectory: root }),
    cleanup: () => s3Storage(rgw.options()).deletePrefix(root),
  };
});
