/**
 * The cost of verifying one signature with registry-kit/trust, per kind: a
 * cosign simple-signing layer (P-256, Ed25519, RSA-2048 keys), a notation
 * envelope (ES256 leaf under an ES384 intermediate and an ES256 root), a
 * sigstore bundle with a key (DSSE) and a keyless one (message signature:
 * chain, Rekor SET and body, identity; made against @sigstore/mock on 127.0.0.1).
 * Each case verifies `n` different signatures (40 keyless ones) on one Trust
 * after one cold call; prints the median of three rounds in µs of CPU per
 * signature. Blobs are read from memory, as a store's cache would give them.
 *
 *   npx tsx bench/trust.ts [n]
 *
 * Not a timed test; figures go to docs/signatures.md.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { createTrust, type Trust, type VerifyInput } from "../src/trust/index.js";
import { artifactOf } from "../test/trust/helpers/artifacts.js";
import { bundleManifest, statement } from "../test/trust/helpers/bundle-artifact.js";
import { blobOf, cosignSign, generateCosignKey, type KeyType } from "../test/trust/helpers/cosign.js";
import { envelope, issue, notationManifest } from "../test/trust/helpers/notation.js";
import { keyBundle, keySigner, startMockSigstore } from "../test/trust/helpers/sigstore.js";

const N = Number(process.argv[2] ?? 100);
const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", layers: [] }));
const image = blobOf(manifest);
const subject = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: image.digest, size: manifest.length };

/**
 * Verifies `inputs[0]` once (cold: key import, library load), then each of the
 * others once per round: new signatures by a known signer, as a pull of a
 * newly signed image meets them. CPU time of this process, median of three rounds.
 */
async function measure(name: string, trust: Trust, inputs: VerifyInput[]): Promise<void> {
  const t0 = performance.now();
  const [first] = await trust.verifySignatures(inputs[0]!);
  const cold = performance.now() - t0;
  if (!first?.ok) throw new Error(`${name}: ${JSON.stringify(first)}`);
  const rounds: number[] = [];
  for (let r = 0; r < 3; r++) {
    const start = process.cpuUsage();
    for (const input of inputs.slice(1)) await trust.verifySignatures(input);
    const used = process.cpuUsage(start);
    rounds.push((used.user + used.system) / (inputs.length - 1));
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(40)} ${rounds[1]!.toFixed(0).padStart(6)} µs CPU/signature   (first call ${cold.toFixed(1)} ms)`);
}

const digests = Array.from({ length: N + 1 }, (_, i) => blobOf(`image ${i}`).digest);

for (const type of ["P-256", "Ed25519", "RSA"] as KeyType[]) {
  const key = generateCosignKey("pw", type);
  const trust = createTrust({ keys: { release: key.publicPem } });
  const inputs = digests.map((digest) => ({ digest, signatures: [artifactOf(cosignSign(key.privatePem, "pw", "r/a:v1", digest))] }));
  await measure(`cosign simple-signing, ${type}`, trust, inputs);
}

const root = await issue("CN=root", undefined, { ca: true });
const inter = await issue("CN=intermediate", root, { ca: true, alg: "ES384" });
const leaf = await issue("CN=signer", inter, { ca: false });
const notation = createTrust({ notation: { release: [root.cert.toString("pem")] } });
const notationInputs: VerifyInput[] = [];
for (const digest of digests) {
  const target = { ...subject, digest };
  notationInputs.push({ digest, signatures: [artifactOf(notationManifest(await envelope([leaf, inter], target), target))] });
}
await measure("notation, ES256 leaf + intermediate", notation, notationInputs);

const ec = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const signer = keySigner(ec.privateKey, "release", (d) => sign("sha256", d, ec.privateKey));
const keyedInputs: VerifyInput[] = [];
for (const digest of digests) keyedInputs.push({ digest, signatures: [artifactOf(bundleManifest(await keyBundle(signer, statement("r/a", digest), true), { ...subject, digest }))] });
await measure("sigstore bundle with a key (DSSE)", createTrust({ keys: { release: ec.publicKey.export({ type: "spki", format: "pem" }) as string } }), keyedInputs);

const mock = await startMockSigstore();
try {
  const identity = { issuer: "https://issuer.example", subject: "https://github.com/acme/app/.github/workflows/release.yml@refs/heads/main" };
  // every keyless signature has its own short-lived certificate: N bundles, each a new leaf
  const inputs: VerifyInput[] = [];
  for (let i = 0; i <= Math.min(N, 40); i++) {
    const m = Buffer.from(JSON.stringify({ schemaVersion: 2, layers: [], n: i }));
    const bundle = await mock.sign(m, { ...identity, dsse: false });
    inputs.push({ digest: blobOf(m).digest, manifest: m, signatures: [artifactOf(bundleManifest(bundle, { ...subject, digest: blobOf(m).digest }))] });
  }
  await measure("sigstore keyless (message signature)", createTrust({ sigstore: { trustedRoot: mock.trustedRoot, identities: [identity] } }), inputs);
} finally {
  await mock.close();
}
