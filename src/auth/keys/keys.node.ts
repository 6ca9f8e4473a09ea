/**
 * Node-only helpers: reading key material and the root certificate bundle
 * from files. Everything else in `src/auth` is runtime-neutral.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import type { JwsAlgorithm } from "../jwt/algorithms.js";
import { parseCertBundle, type TrustStore } from "../trust/cert-bundle.js";
import { pemKeys, type KeyProvider } from "./keys.js";

/** Paths of {@link pemKeysFromFiles}. */
export interface PemKeyFiles {
  /** PKCS#8 (or PKCS#1 / SEC1) private key PEM file. */
  privateKey: string;
  /** Certificate (chain) PEM file, leaf first. */
  certificate?: string;
  /** More trusted certificates / public keys (rotation). */
  additionalTrusted?: string[];
  /** Signing algorithm; default from the key type (see `pemKeys`). */
  alg?: JwsAlgorithm;
}

/** A {@link pemKeys} provider whose PEM texts are read from files (once). */
export async function pemKeysFromFiles(files: PemKeyFiles): Promise<KeyProvider> {
  const privateKey = await readFile(files.privateKey, "utf8");
  const certificate = files.certificate ? await readFile(files.certificate, "utf8") : undefined;
  const additionalTrusted = await Promise.all((files.additionalTrusted ?? []).map((p) => readFile(p, "utf8")));
  const provider = pemKeys({
    privateKey,
    ...(certificate !== undefined ? { certificate } : {}),
    additionalTrusted,
    ...(files.alg ? { alg: files.alg } : {}),
  });
  await provider.signingKey();
  return provider;
}

/** Read the PEM text of a root certificate bundle (Distribution's `rootcertbundle` path). */
export async function readRootCertBundle(path: string): Promise<string> {
  return readFile(path, "utf8");
}

/** Read and parse a root certificate bundle file into a trust store. */
export async function loadTrustStore(path: string): Promise<TrustStore> {
  return parseCertBundle(await readRootCertBundle(path));
}
