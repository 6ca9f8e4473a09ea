/**
 * registry-kit's token service (the `realm`) served on 127.0.0.1:<free port>
 * with an in-memory credential check, an ACL policy and a generated RSA key
 * with a self-signed certificate. The certificate is written to a file so that
 * a registry (ours or Distribution's `auth.token.rootcertbundle`) can trust it.
 * Every token handed out is kept, decoded, for assertions.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { aclPolicy, createTokenService, generatedKeys, memoryCredentials, type AclRule } from "../../../src/auth/index.js";
import { tempDir } from "./process.js";
import { serveRecorded, type RunningService } from "./serve.js";

export interface IssuedToken {
  /** The query string of the token request. */
  query: string;
  /** `Basic` or undefined (anonymous). */
  auth: string | undefined;
  status: number;
  header?: { alg: string; kid?: string; x5c?: string[]; typ?: string };
  claims?: { iss: string; sub: string; aud: string | string[]; access: Array<{ type: string; name: string; actions: string[] }> };
  /** The error body for refused requests. */
  error?: unknown;
}

export interface TokenServiceFixture extends RunningService {
  /** The realm URL to configure in registries. */
  realm: string;
  service: string;
  issuer: string;
  /** Path of the PEM certificate (the root cert bundle). */
  rootCertBundle: string;
  /** The key provider, to build registry-kit's own verifier. */
  keys: ReturnType<typeof generatedKeys>;
  issued: IssuedToken[];
}

export interface TokenServiceFixtureOptions {
  users: Record<string, { password: string; admin?: boolean }>;
  rules: AclRule[];
  /** Put the certificate chain in the token header (default true). */
  x5c?: boolean;
  service?: string;
  issuer?: string;
  /** Issue tokens to anonymous callers (default true). */
  allowAnonymous?: boolean;
}

function decodePart(part: string): unknown {
  return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
}

export async function startTokenService(opts: TokenServiceFixtureOptions): Promise<TokenServiceFixture> {
  const tmp = tempDir("token-service");
  const service = opts.service ?? "registry.test";
  const issuer = opts.issuer ?? "registry-kit-interop";
  const keys = generatedKeys();
  const { certificate } = await keys.exportPem();
  const rootCertBundle = join(tmp.path, "rootcert.pem");
  writeFileSync(rootCertBundle, certificate);
  const handler = createTokenService({
    issuer,
    service,
    keys,
    checkCredentials: memoryCredentials(opts.users),
    policy: aclPolicy(opts.rules),
    x5c: opts.x5c ?? true,
    allowAnonymous: opts.allowAnonymous ?? true,
  });
  const issued: IssuedToken[] = [];
  const recordingHandler = async (request: Request): Promise<Response> => {
    const response = await handler(request);
    const entry: IssuedToken = {
      query: new URL(request.url).search.slice(1),
      auth: request.headers.get("authorization")?.split(" ")[0],
      status: response.status,
    };
    try {
      const body = (await response.clone().json()) as { token?: string };
      if (response.ok && body.token) {
        const [h, p] = body.token.split(".");
        entry.header = decodePart(h!) as IssuedToken["header"];
        entry.claims = decodePart(p!) as IssuedToken["claims"];
      } else {
        entry.error = body;
      }
    } catch (err) {
      entry.error = String(err);
    }
    issued.push(entry);
    return response;
  };
  const running = await serveRecorded(recordingHandler);
  return {
    ...running,
    realm: `${running.url}/service/token`,
    service,
    issuer,
    rootCertBundle,
    keys,
    issued,
    async close() {
      await running.close();
      tmp.remove();
    },
  };
}

/** One line per token request, for assertion messages. */
export function dumpIssued(issued: readonly IssuedToken[]): string {
  return issued
    .map(
      (t) =>
        `${t.status} ${t.auth ?? "anonymous"} ?${decodeURIComponent(t.query)} -> ` +
        (t.claims ? `sub=${JSON.stringify(t.claims.sub)} access=${JSON.stringify(t.claims.access)} kid=${t.header?.kid} x5c=${t.header?.x5c ? t.header.x5c.length : 0}` : JSON.stringify(t.error)),
    )
    .join("\n");
}
