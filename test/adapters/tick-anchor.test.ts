import { spawn, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CHILD = fileURLToPath(new URL("./tick-anchor-child.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// Inside the checkout, so that the build's imports of registry-kit's dependencies resolve from node_modules.
mkdirSync(join(ROOT, "node_modules", ".cache"), { recursive: true });
const build = mkdtempSync(join(ROOT, "node_modules", ".cache", "rk-tick-anchor-"));
afterAll(() => rmSync(build, { recursive: true, force: true }));
const work = mkdtempSync(join(tmpdir(), "rk-tick-anchor-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * The states of the define sites of `nextTick`'s tick object literal after sixteen idle-time full collections (tick-anchor-child.ts).
 * The child's stdout is a file: %DebugPrint writes from C++, and on a non-blocking pipe it loses what does not fit.
 */
async function statesAfterCollections(mode: "none" | "listener" | "bundled"): Promise<{ anchored: boolean; states: string[] }> {
  const file = join(work, `${mode}.out`);
  const out = openSync(file, "w");
  let stderr = "";
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", "--allow-natives-syntax", "--import", "tsx", CHILD, mode, join(build, "index.js")], { stdio: ["ignore", out, "pipe"], timeout: 60_000 });
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", resolve);
  });
  closeSync(out);
  const stdout = readFileSync(file, "utf8");
  if (code !== 0) throw new Error(`child exited with ${code}\n${stderr}`);
  const states = [...stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
  const { anchored } = JSON.parse(stdout.trim().split("\n").at(-1)!) as { anchored: boolean };
  return { anchored, states };
}

type Outcome = Awaited<ReturnType<typeof statesAfterCollections>>;
let alone: Outcome;
let adapter: Outcome;
let built: Outcome;

/**
 * registry-kit/node built as the package builds it (tsup, ESM, rollup's tree shaking): the build once dropped the
 * anchor as a store nothing reads, which the sources alone cannot show. Then the three children, at once.
 */
beforeAll(async () => {
  const tsup = join(ROOT, "node_modules", "tsup", "dist", "cli-default.js");
  const args = [tsup, "src/node/index.ts", "--no-config", "--format", "esm", "--treeshake", "--target", "node20", "-d", build, "--silent"];
  const made = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  if (made.status !== 0) throw new Error(`tsup failed: ${made.stderr}`);
  [alone, adapter, built] = await Promise.all([statesAfterCollections("none"), statesAfterCollections("listener"), statesAfterCollections("bundled")]);
}, 120_000);

describe("the Node adapter keeps a tick object alive", () => {
  it("without it, full collections while no tick object lives turn nextTick's literal megamorphic; with the adapter's listeners it stays monomorphic", () => {
    // What the anchor is for, on this Node: the literal's later keys go megamorphic for good.
    expect(alone.anchored).toBe(false);
    expect(alone.states.length).toBeGreaterThanOrEqual(4);
    expect(alone.states.filter((s) => s === "MEGAMORPHIC").length).toBeGreaterThanOrEqual(3);
    // The listeners anchored one, and every site kept its one map.
    expect(adapter.anchored).toBe(true);
    expect(adapter.states.length).toBe(alone.states.length);
    expect(adapter.states.every((s) => s === "MONOMORPHIC")).toBe(true);
  });

  it("so does the built package: the anchor survives the bundler's tree shaking", () => {
    expect(built.states.length).toBe(alone.states.length);
    expect(built.states.every((s) => s === "MONOMORPHIC")).toBe(true);
    expect(built.anchored).toBe(true);
  });
});
