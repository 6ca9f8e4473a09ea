/**
 * The files every containers/image tool (skopeo, podman, buildah) reads,
 * written fresh into one temporary directory so a test never touches the
 * machine's own configuration: an empty auth file, a policy that accepts
 * everything (images here are unsigned test images), and a registries.conf
 * with no search registries (short names never reach the network).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface ToolConfig {
  /** Create (mode 0700) and return a subdirectory of the sandbox. */
  sub(name: string): string;
  authfile: string;
  policy: string;
  registriesConf: string;
}

export function isolatedToolConfig(dir: string): ToolConfig {
  const sub = (name: string) => {
    const p = join(dir, name);
    mkdirSync(p, { recursive: true, mode: 0o700 });
    return p;
  };
  const authfile = join(dir, "auth.json");
  writeFileSync(authfile, JSON.stringify({ auths: {} }));
  const policy = join(dir, "policy.json");
  writeFileSync(policy, JSON.stringify({ default: [{ type: "insecureAcceptAnything" }] }));
  const registriesConf = join(dir, "registries.conf");
  writeFileSync(registriesConf, 'unqualified-search-registries = []\nshort-name-mode = "disabled"\n');
  return { sub, authfile, policy, registriesConf };
}
