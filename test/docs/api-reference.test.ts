/**
 * The API reference (`npm run docs`, typedoc.json) builds without a warning:
 * an unresolved `{@link}` or an undocumented export is a reader's dead end.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

describe("docs: the API reference", () => {
  it("typedoc reports no warning (issue 42: the link to DEFAULT_MANIFEST_MEDIA_TYPES)", () => {
    let output: string;
    try {
      output = execFileSync(process.execPath, [path.join(root, "node_modules/typedoc/bin/typedoc"), "--emit", "none", "--treatWarningsAsErrors"], {
        cwd: root,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      output = `${stdout ?? ""}${stderr ?? ""}`;
    }
    const warnings = output.split("\n").filter((line) => /\[(warning|error)\]/.test(line) && !/Found 0 errors and 0 warnings/.test(line));
    expect(warnings).toEqual([]);
  }, 240_000);
});
