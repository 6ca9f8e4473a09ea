/**
 * cosign key-based signing without cosign (Debian's skopeo and podman are
 * built with sigstore disabled), exactly as cosign and containers/image 5.23
 * write it, for trying registry-kit/trust and admission policies by hand:
 *
 *   COSIGN_PASSWORD=pw npx tsx scripts/cosign-sign.ts keygen <dir> [--type P-256|P-384|Ed25519|RSA]
 *       → <dir>/cosign.key (ENCRYPTED COSIGN PRIVATE KEY: scrypt N=32768 r=8 p=1, nacl secretbox) and <dir>/cosign.pub
 *   COSIGN_PASSWORD=pw npx tsx scripts/cosign-sign.ts sign --key <dir>/cosign.key --ref <host/repo:tag> --digest sha256:<hex> <layout>
 *       → an OCI image layout holding the signature manifest under the tag sha256-<hex>.sig, to push with
 *         skopeo copy --dest-tls-verify=false oci:<layout>:sha256-<hex>.sig docker://<host>/<repo>:sha256-<hex>.sig
 *
 * The signing code is test/trust/helpers/cosign.ts, which the tests use.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cosignSign, generateCosignKey, writeSignatureLayout, type KeyType } from "../test/trust/helpers/cosign.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { type: { type: "string" }, key: { type: "string" }, ref: { type: "string" }, digest: { type: "string" } },
});
const [command, dir] = positionals;
const password = process.env.COSIGN_PASSWORD ?? "";

if (command === "keygen" && dir) {
  const { privatePem, publicPem } = generateCosignKey(password, (values.type ?? "P-256") as KeyType);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "cosign.key"), privatePem, { mode: 0o600 });
  writeFileSync(join(dir, "cosign.pub"), publicPem);
  console.log(`wrote ${join(dir, "cosign.key")} and ${join(dir, "cosign.pub")}`);
} else if (command === "sign" && dir && values.key && values.ref && values.digest) {
  const signed = cosignSign(readFileSync(values.key, "utf8"), password, values.ref, values.digest);
  const tag = `${values.digest.replace(":", "-")}.sig`;
  writeSignatureLayout(dir, signed, tag);
  console.log(JSON.stringify({ tag, manifest: signed.manifest.digest }));
} else {
  console.error("usage: cosign-sign keygen <dir> [--type P-256|P-384|Ed25519|RSA] | sign --key <file> --ref <ref> --digest <digest> <layout>");
  process.exit(2);
}
