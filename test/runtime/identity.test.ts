/**
 * Which runtime runs this suite. `scripts/runtimes.mjs` runs the core's unit
 * suites under Node 22/24, Bun, Deno and workerd with RK_EXPECT_RUNTIME set, so a
 * matrix entry that silently fell back to the host Node fails here instead
 * of passing as the wrong runtime.
 */
import { describe, expect, it } from "vitest";

interface RuntimeGlobals {
  Bun?: { version: string };
  Deno?: { version: { deno: string } };
}

function runtime(): string {
  const g = globalThis as RuntimeGlobals;
  if (g.Bun) return `bun ${g.Bun.version}`;
  if (g.Deno) return `deno ${g.Deno.version.deno}`;
  // workerd (with nodejs_compat it has a `process` too); it tells no version of its own.
  if (globalThis.navigator?.userAgent === "Cloudflare-Workers") return "workerd -";
  return `node ${process.versions.node}`;
}

describe("runtime identity", () => {
  it("runs on the runtime the matrix asked for (node when run plainly)", () => {
    const expected = process.env.RK_EXPECT_RUNTIME ?? "node";
    const [name, major] = expected.split("@") as [string, string | undefined];
    const [actualName, actualVersion] = runtime().split(" ") as [string, string];
    expect(actualName).toBe(name);
    if (major) expect(actualVersion.split(".")[0]).toBe(major);
    console.log(`runtime: ${runtime()}`);
  });
});
