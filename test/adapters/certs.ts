/**
 * Certificates for the TLS tests, made by the real `openssl` in a temporary
 * directory: a CA with a server certificate for 127.0.0.1/localhost and a
 * client certificate, and a second, unrelated CA with its own client
 * certificate (which a server trusting only the first must refuse).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Paths of the files {@link makeCerts} wrote. */
export interface Certs {
  dir: string;
  /** The CA that signed the server and the good client certificate. */
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA nobody trusts, and a client certificate it signed. */
  otherCa: string;
  otherClientCert: string;
  otherClientKey: string;
  /** Read a file as a string. */
  read(path: string): string;
  /** Remove the directory. */
  remove(): void;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
    "-subj", `/CN=${name}`, "-keyout", `${name}.key`, "-out", `${name}.crt`,
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
}

function issue(dir: string, ca: string, name: string, ext: string): void {
  openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", `/CN=${name}`,
    "-keyout", `${name}.key`, "-out", `${name}.csr`);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, "x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial",
    "-days", "2", "-out", `${name}.crt`, "-extfile", `${name}.ext`);
}

/** Make the CAs and certificates in a new temporary directory. */
export function makeCerts(): Certs {
  const dir = mkdtempSync(join(tmpdir(), "rk-tls-"));
  makeCa(dir, "ca");
  makeCa(dir, "other-ca");
  issue(dir, "ca", "server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  issue(dir, "ca", "client", "extendedKeyUsage=clientAuth\n");
  issue(dir, "other-ca", "other-client", "extendedKeyUsage=clientAuth\n");
  const p = (name: string) => join(dir, name);
  return {
    dir,
    ca: p("ca.crt"),
    serverCert: p("server.crt"),
    serverKey: p("server.key"),
    clientCert: p("client.crt"),
    clientKey: p("client.key"),
    otherCa: p("other-ca.crt"),
    otherClientCert: p("other-client.crt"),
    otherClientKey: p("other-client.key"),
    read: (path) => readFileSync(path, "utf8"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
