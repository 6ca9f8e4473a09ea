/**
 * The "invalid keys" section of the storage contract: every method refuses a bad key
 * with `invalid_key`.
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import { expectCode } from "./assertions.js";
import type { StorageContractContext } from "./context.js";
import { encoder } from "./streams-fixtures.js";

/** Declare the "invalid keys" tests. */
export function invalidKeyTests(ctx: StorageContractContext): void {
  const { readText, put } = ctx;
  describe("invalid keys", () => {
    const bad: [string, string][] = [
      ["empty", ""],
      ["dot-dot", ".."],
      ["parent escape", "../x"],
      ["nested escape", "a/../../x"],
      ["dot segment", "a/./b"],
      ["single dot", "."],
      ["absolute", "/abs"],
      ["absolute etc", "/etc/passwd"],
      ["empty segment", "a//b"],
      ["trailing slash", "a/"],
      ["NUL", "a\u0000b"],
      ["backslash", "a\\b"],
      ["backslash escape", "..\\x"],
      ["percent-encoded NUL", "%00"],
      ["percent-encoded dots", "%2e%2e/x"],
      ["newline", "a\nb"],
      ["space", "a b"],
      ["tilde (temp names)", "~tmp/x"],
      ["non-ASCII", "caf\u00e9"],
      ["too long", "k/".repeat(600) + "k"],
      ["segment over 255", "s".repeat(256)],
    ];
    const good = "valid/key";

    it.each(bad)("rejects %s with invalid_key in every method", async (_, key) => {
      await put(good, "x");
      await expectCode(ctx.store.stat(key), "invalid_key");
      await expectCode(ctx.store.read(key), "invalid_key");
      await expectCode(ctx.store.read(key, { offset: 0, length: 1 }), "invalid_key");
      await expectCode(ctx.store.write(key, encoder.encode("x")), "invalid_key");
      await expectCode(ctx.store.append(key, encoder.encode("x")), "invalid_key");
      await expectCode(ctx.store.move(key, good), "invalid_key");
      await expectCode(ctx.store.move(good, key), "invalid_key");
      await expectCode(ctx.store.delete(key), "invalid_key");
      await expectCode(ctx.store.deletePrefix(key), "invalid_key");
      await expectCode(ctx.store.list(key), "invalid_key");
      expect(await readText(good)).toBe("x");
    });

    it("rejects without throwing synchronously", () => {
      const pending = ctx.store.stat("../x");
      expect(pending).toBeInstanceOf(Promise);
      return expectCode(pending, "invalid_key");
    });
  });
}
