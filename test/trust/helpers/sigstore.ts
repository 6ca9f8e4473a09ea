/**
 * Keyless sigstore signing, offline and real: @sigstore/mock's Fulcio (with a
 * CT log, so certificates carry SCTs) and Rekor behind one node:http server on
 * 127.0.0.1, @sigstore/sign's FulcioSigner and RekorWitness talking to it,
 * and the trusted root (sigstore's JSON) naming that CA and log, for
 * registry-kit and for @sigstore/verify, the oracle.
 */
import { createHash, generateKeyPairSync, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { bundleFromJSON, bundleToJSON, type Bundle } from "@sigstore/bundle";
import { fulcioHandler, initializeCA, initializeCTLog, initializeTLog, rekorHandler } from "@sigstore/mock";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import { DSSEBundleBuilder, FulcioSigner, MessageSignatureBundleBuilder, RekorWitness, type Signer } from "@sigstore/sign";
import { Verifier, toSignedEntity, toTrustMaterial } from "@sigstore/verify";
import { createPublicKey } from "node:crypto";

type Handler = { path: string; fn: (body: string) => Promise<{ statusCode: number; response: string; contentType?: string }> };

const ecPair = () => generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

/** An unsigned-looking OIDC token: the mock reads `iss` and `sub` and checks nothing else. */
function idToken(issuer: string, subject: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part({ iss: issuer, sub: subject, aud: "sigstore", exp: Math.floor(Date.now() / 1000) + 600 })}.c2ln`;
}

export interface MockSigstore {
  url: string;
  /** The trusted root as sigstore's JSON (`TrustedRoot.toJSON`). */
  trustedRoot: Record<string, unknown>;
  /** A keyless bundle (JSON) over `data`: a DSSE in-toto statement or a message signature. */
  sign(data: Buffer, options: { issuer: string; subject: string; dsse: boolean }): Promise<Record<string, any>>;
  close(): Promise<void>;
}

/**
 * Starts a mock Fulcio + Rekor; `caClock` backdates the CA (its certificates are valid 10 minutes from then),
 * `ctLog: false` leaves the SCTs out of its certificates.
 */
export async function startMockSigstore(options: { caClock?: Date; ctLog?: boolean } = {}): Promise<MockSigstore> {
  const caKeys = ecPair();
  const ctKeys = ecPair();
  const tlogKeys = ecPair();
  const ctlog = await initializeCTLog(ctKeys as never);
  const ca = await initializeCA(caKeys as never, options.ctLog === false ? undefined : ctlog, options.caClock);
  let url = "";
  const handlers: Handler[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const handler = handlers.find((h) => req.method === "POST" && req.url === h.path);
      if (!handler) return void res.writeHead(404).end();
      void handler.fn(Buffer.concat(chunks).toString()).then(({ statusCode, response, contentType }) => {
        res.writeHead(statusCode, { "content-type": contentType ?? "text/plain" }).end(response);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tlog = await initializeTLog(url, tlogKeys as never);
  handlers.push(fulcioHandler(ca) as Handler, rekorHandler(tlog) as Handler);

  const start = new Date(Date.now() - 86_400_000);
  const spki = (k: KeyObject) => k.export({ type: "spki", format: "der" });
  const trustedRoot = TrustedRoot.toJSON(
    TrustedRoot.fromJSON({
      mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
      tlogs: [{ baseUrl: url, hashAlgorithm: "SHA2_256", publicKey: { rawBytes: b64(spki(tlogKeys.publicKey)), keyDetails: "PKIX_ECDSA_P256_SHA_256", validFor: { start: start.toISOString() } }, logId: { keyId: b64(createHash("sha256").update(spki(tlogKeys.publicKey)).digest()) } }],
      certificateAuthorities: [{ subject: { organization: "sigstore.mock", commonName: "sigstore" }, uri: url, certChain: { certificates: [{ rawBytes: b64(ca.rootCertificate as unknown as Uint8Array) }] }, validFor: { start: new Date(0).toISOString() } }],
      ctlogs: [{ baseUrl: url, hashAlgorithm: "SHA2_256", publicKey: { rawBytes: b64(spki(ctKeys.publicKey)), keyDetails: "PKIX_ECDSA_P256_SHA_256", validFor: { start: start.toISOString() } }, logId: { keyId: b64(createHash("sha256").update(spki(ctKeys.publicKey)).digest()) } }],
      timestampAuthorities: [],
    }),
  ) as Record<string, unknown>;

  return {
    url,
    trustedRoot,
    async sign(data, { issuer, subject, dsse }) {
      const signer = new FulcioSigner({ fulcioBaseURL: url, identityProvider: { getToken: async () => idToken(issuer, subject) }, retry: 0 });
      // intoto entries for DSSE: the mock stores a proposed dsse entry as sent, where Rekor would
      // store its canonical form (which registry-kit and @sigstore/verify read).
      const witnesses = [new RekorWitness({ rekorBaseURL: url, retry: 0, entryType: "intoto" })];
      const bundle: Bundle = dsse
        ? await new DSSEBundleBuilder({ signer, witnesses }).create({ data, type: "application/vnd.in-toto+json" })
        : await new MessageSignatureBundleBuilder({ signer, witnesses }).create({ data });
      return bundleToJSON(bundle) as unknown as Record<string, any>;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A signer with a plain key (no Fulcio, no Rekor): a bundle verifiable offline with that key, named by `hint`. */
export function keySigner(privateKey: KeyObject, hint: string, sign: (data: Buffer) => Buffer): Signer {
  const publicKey = createPublicKey(privateKey).export({ type: "spki", format: "pem" }) as string;
  return { sign: async (data) => ({ signature: sign(data), key: { $case: "publicKey", publicKey, hint } }) };
}

/** A bundle over `data` signed by `signer` without witnesses. */
export async function keyBundle(signer: Signer, data: Buffer, dsse: boolean): Promise<Record<string, any>> {
  const bundle = dsse
    ? await new DSSEBundleBuilder({ signer, witnesses: [] }).create({ data, type: "application/vnd.in-toto+json" })
    : await new MessageSignatureBundleBuilder({ signer, witnesses: [] }).create({ data });
  return bundleToJSON(bundle) as unknown as Record<string, any>;
}

/**
 * @sigstore/verify's verdict on a bundle: `"ok"` or its error code. For a
 * message signature `artifact` is the signed bytes. Keyless bundles use the
 * trusted root and `identity`; keyed ones `keys` by hint, with no log or timestamp required.
 */
export function oracle(
  bundleJson: unknown,
  options: { artifact?: Buffer; trustedRoot?: unknown; identity?: { issuer: string; subject: string }; keys?: Record<string, string> },
): string {
  try {
    const bundle = bundleFromJSON(bundleJson);
    const root = TrustedRoot.fromJSON(options.trustedRoot ?? { tlogs: [], certificateAuthorities: [], ctlogs: [], timestampAuthorities: [] });
    const keys = options.keys;
    const material = toTrustMaterial(
      root,
      keys
        ? (hint: string) => {
            if (!keys[hint]) throw new Error(`no key ${hint}`);
            return { publicKey: createPublicKey(keys[hint]), validFor: () => true };
          }
        : undefined,
    );
    const verifier = new Verifier(material, keys ? { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 } : {});
    const policy = options.identity ? { subjectAlternativeName: options.identity.subject, extensions: { issuer: options.identity.issuer } } : undefined;
    verifier.verify(toSignedEntity(bundle, options.artifact), policy);
    return "ok";
  } catch (err) {
    return (err as { code?: string }).code ?? (err as Error).message;
  }
}
