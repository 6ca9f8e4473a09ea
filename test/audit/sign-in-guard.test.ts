import { describe, expect, it } from "vitest";
import { storageAuditLog } from "../../src/audit/log.js";
import { createAuditor } from "../../src/audit/auditor.js";
import { apiDoor, guardRoute, uiDoor } from "../../src/server/all-in-one/sign-in-guard.js";
import { memoryStorage } from "../../src/storage/memory/index.js";
import { createThrottle } from "../../src/throttle/index.js";

const basic = (user: string, password: string) => `Basic ${btoa(`${user}:${password}`)}`;

describe("the sign-in guard", () => {
  it("a lock ends after its time: the handler is asked again (injected clock)", async () => {
    let now = 0;
    let calls = 0;
    const route = guardRoute(
      { matches: () => true, handler: async (req) => { calls++; return new Response(null, { status: req.headers.get("authorization")?.includes("cmlnaHQ") ? 200 : 401 }); } },
      apiDoor,
      { throttle: createThrottle({}, () => now), auditor: undefined, addressOf: () => "10.0.0.1" },
    );
    const ask = (password: string) => route.handler(new Request("http://r.test/api/users", { headers: { authorization: basic("admin", password) } }));
    for (let i = 0; i < 6; i++) expect((await ask("wrong")).status).toBe(401);
    const locked = await ask("wrong");
    expect(locked.status).toBe(429);
    expect(locked.headers.get("retry-after")).toBe("1");
    expect(await locked.json()).toEqual({ errors: [{ code: "TOOMANYREQUESTS", message: "too many failed sign-ins; try again later", detail: { retryAfterSeconds: 1 } }] });
    expect(calls).toBe(6); // no password check while locked
    now += 1000;
    expect((await ask("right")).status).toBe(200);
    expect(calls).toBe(7);
  });

  it("reads the web form's name from a copy: the page still reads the body, and the attempt is audited", async () => {
    const storage = memoryStorage();
    const log = storageAuditLog(storage);
    const auditor = createAuditor({ log, logHook: () => {}, addressOf: () => "192.0.2.7" });
    const route = guardRoute(
      { matches: () => true, handler: async (req) => new Response(null, { status: (await req.text()).includes("password=ok") ? 303 : 401 }) },
      uiDoor("/ui"),
      { throttle: createThrottle(), auditor, addressOf: () => "192.0.2.7" },
    );
    const post = (body: string) => route.handler(new Request("http://r.test/ui/sign-in", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body }));
    expect((await post("username=erin&password=no")).status).toBe(401);
    expect((await post("username=erin&password=ok")).status).toBe(303);
    const { records } = await log.list();
    expect(records.map((r) => [r.action, r.who.name, r.result, r.from?.channel, r.from?.addr])).toEqual([
      ["signin", "erin", "refused", "ui", "192.0.2.7"],
      ["signin", "erin", "ok", "ui", "192.0.2.7"],
    ]);
  });
});
