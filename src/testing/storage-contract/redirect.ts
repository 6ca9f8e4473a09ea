/**
 * The "redirectURL" section of the storage contract: the optional capability
 * of handing out a time-limited URL for an object. A driver declares it with
 * the suite's `redirect` option; one that does not must not offer it, so a
 * driver cannot gain the capability without these tests.
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import type { StorageContractContext } from "./context.js";
import { encoder, randomBytes } from "./streams-fixtures.js";

/** How long the expiry test waits at most for a 1-second URL to be refused. */
const EXPIRY_WAIT_MS = 30_000;

async function fetchBytes(url: string, headers?: Record<string, string>): Promise<{ status: number; body: Uint8Array }> {
  const response = await fetch(url, { headers: headers ?? {}, redirect: "manual" });
  return { status: response.status, body: new Uint8Array(await response.arrayBuffer()) };
}

/** Declare the "redirectURL" tests; `offered` is the suite's `redirect` option. */
export function redirectTests(ctx: StorageContractContext, offered: boolean): void {
  describe("redirectURL", () => {
    if (!offered) {
      it("is not offered by a driver that does not declare it", () => {
        expect(ctx.store.redirectURL).toBeUndefined();
      });
      return;
    }

    const url = async (key: string, expiresInSeconds?: number): Promise<string | undefined> => {
      const redirect = ctx.store.redirectURL;
      expect(redirect, "the driver declares redirectURL but does not offer it").toBeTypeOf("function");
      return redirect!(key, expiresInSeconds === undefined ? undefined : { expiresInSeconds });
    };

    it("gives a URL that serves exactly the object's bytes, whole and by range, without credentials", async () => {
      const data = randomBytes(300_000);
      await ctx.store.write("redir/blob", data);
      const location = await url("redir/blob");
      expect(location).toMatch(/^https?:\/\//);
      const whole = await fetchBytes(location!);
      expect(whole.status).toBe(200);
      expect(whole.body.length).toBe(data.length);
      expect(Buffer.from(whole.body).equals(Buffer.from(data))).toBe(true);
      const part = await fetchBytes(location!, { range: "bytes=1000-1999" });
      expect(part.status).toBe(206);
      expect(Buffer.from(part.body).equals(Buffer.from(data.subarray(1000, 2000)))).toBe(true);
    });

    it("serves the new bytes after the object is replaced (a fresh URL)", async () => {
      await ctx.put("redir/replaced", "old");
      await ctx.put("redir/replaced", "new bytes");
      const got = await fetchBytes((await url("redir/replaced"))!);
      expect(new TextDecoder().decode(got.body)).toBe("new bytes");
    });

    it("is undefined for a missing object", async () => {
      expect(await url("redir/missing")).toBeUndefined();
    });

    it("is undefined, or serves exactly the bytes, for an object being appended", async () => {
      await ctx.store.append("redir/upload", encoder.encode("part one,"));
      await ctx.store.append("redir/upload", encoder.encode(" part two"), { expectedSize: 9 });
      const location = await url("redir/upload");
      if (location !== undefined) {
        const got = await fetchBytes(location);
        expect(new TextDecoder().decode(got.body)).toBe("part one, part two");
      }
      await ctx.store.move("redir/upload", "redir/done", { expectedSize: 18 });
      const moved = await fetchBytes((await url("redir/done"))!);
      expect(new TextDecoder().decode(moved.body)).toBe("part one, part two");
    });

    it("refuses an invalid key and an invalid lifetime", async () => {
      await expect(url("../escape")).rejects.toMatchObject({ code: "invalid_key" });
      await ctx.put("redir/k", "x");
      await expect(url("redir/k", 0)).rejects.toMatchObject({ code: "invalid_range" });
      await expect(url("redir/k", 1.5)).rejects.toMatchObject({ code: "invalid_range" });
    });

    it("expires: a URL valid for one second is refused once it is past", async () => {
      await ctx.put("redir/short", "short-lived");
      const location = (await url("redir/short", 1))!;
      const deadline = Date.now() + EXPIRY_WAIT_MS;
      let last = await fetchBytes(location);
      while (last.status === 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        last = await fetchBytes(location);
      }
      expect(last.status).toBeGreaterThanOrEqual(400);
      expect(new TextDecoder().decode(last.body)).not.toContain("short-lived");
      // A fresh URL still works: only that URL expired, not the object.
      expect((await fetchBytes((await url("redir/short"))!)).status).toBe(200);
    }, EXPIRY_WAIT_MS + 10_000);
  });
}
