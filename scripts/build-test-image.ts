/**
 * Build the interop tests' hand-made image outside a test, to poke at a
 * registry by hand:
 *
 *   npx tsx scripts/build-test-image.ts <dir> [--layers N] [--sizes 1024,300000] [--tag v1] [--format oci|docker]
 *   skopeo copy --dest-tls-verify=false oci:<dir>:v1 docker://127.0.0.1:5000/demo/app:v1   # format oci
 *   skopeo copy --dest-tls-verify=false dir:<dir> docker://127.0.0.1:5000/demo/app:v1      # format docker
 *
 * Prints the reference to give skopeo and every digest as JSON.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildTestImage } from "../test/interop/helpers/image.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    layers: { type: "string" },
    sizes: { type: "string" },
    tag: { type: "string" },
    format: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});

if (values.help || positionals.length !== 1) {
  console.error("usage: build-test-image <dir> [--layers N] [--sizes 1024,300000] [--tag v1] [--format oci|docker]");
  process.exit(values.help ? 0 : 2);
}
const format = values.format ?? "oci";
if (format !== "oci" && format !== "docker") {
  console.error(`--format must be oci or docker, not ${format}`);
  process.exit(2);
}
const sizes = values.sizes?.split(",").map((s) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`bad size: ${s}`);
    process.exit(2);
  }
  return n;
});

const img = buildTestImage(resolve(positionals[0]!), {
  format,
  ...(values.layers ? { layers: Number(values.layers) } : {}),
  ...(sizes ? { sizes } : {}),
  ...(values.tag ? { tag: values.tag } : {}),
});
console.log(
  JSON.stringify(
    {
      ref: img.ref,
      mediaType: img.mediaType,
      manifestDigest: img.manifestDigest,
      manifestSize: img.manifestBytes.length,
      config: { digest: img.config.digest, size: img.config.size },
      layers: img.layers.map((l) => ({ digest: l.digest, size: l.size, diffId: l.diffId })),
    },
    null,
    2,
  ),
);
