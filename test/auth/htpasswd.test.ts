import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBasicAuthorizer, htpasswdCheck, parseHtpasswd } from "../../src/auth/basic/htpasswd.js";
import { htpasswdCredentials } from "../../src/auth/basic/htpasswd.node.js";

// `htpasswd -B` writes $2y$; bcryptjs writes $2b$ (the same algorithm). Low cost: test data only.
const y = (password: string) => bcrypt.hashSync(password, 4).replace(/^\$2b\$/, "$2y$");
const alice = y("alice-pw");
const bob = bcrypt.hashSync("bob-pw", 4).replace(/^\$2b\$/, "$2a$");
const basic = (u: string, p: string) => `Basic ${btoa(`${u}:${p}`)}`;

describe("parseHtpasswd", () => {
  it("reads user:hash lines, skipping blanks and comments", () => {
    const users = parseHtpasswd(`# users\n\nalice:${alice}\r\nbob:${bob}\n`);
    expect([...users.keys()]).toEqual(["alice", "bob"]);
  });

  it.each([
    ["alice:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "SHA-1"],
    ["alice:$apr1$abcdefgh$0123456789012345678901", "MD5"],
    ["alice:plaintext", "plain"],
    ["alice:$6$salt$hash", "crypt"],
  ])("leaves out a non-bcrypt hash (%s), reporting its line and user, and keeps the bcrypt users (as Distribution 2.8)", (line, _kind) => {
    const ignored: unknown[] = [];
    const users = parseHtpasswd(`# c\n${line}\nbob:${bob}\n`, (i) => ignored.push(i));
    expect([...users.keys()]).toEqual(["bob"]);
    expect(ignored).toEqual([{ line: 2, user: "alice" }]);
  });

  it("refuses a line without a colon and a repeated user", () => {
    expect(() => parseHtpasswd("alice\n")).toThrow(/^htpasswd line 1: expected "user:hash"/);
    expect(() => parseHtpasswd(`alice:${alice}\nalice:${bob}\n`)).toThrow(/line 2: user "alice" appears twice/);
  });
});

describe("htpasswdCheck", () => {
  const check = htpasswdCheck(`alice:${alice}\nbob:${bob}\n`);
  it("accepts the right password ($2y$ and $2a$), refuses wrong ones and unknown users", async () => {
    expect(await check("alice", "alice-pw")).toEqual({ name: "alice", admin: false });
    expect(await check("bob", "bob-pw")).toEqual({ name: "bob", admin: false });
    expect(await check("alice", "bob-pw")).toBeUndefined();
    expect(await check("carol", "alice-pw")).toBeUndefined();
    expect(await check.lookupUser("bob")).toEqual({ name: "bob", admin: false });
    expect(await check.lookupUser("carol")).toBeUndefined();
    expect(await htpasswdCheck("")("alice", "x")).toBeUndefined();
  });
});

describe("an htpasswd file with a non-bcrypt line (issue 41, item 13)", () => {
  const text = `alice:${alice}\ncarol:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\nbob:${bob}\ndave:$apr1$abcdefgh$0123456789012345678901\n`;

  it("lets the bcrypt users in and refuses the others with 401, warning once per ignored line, never with the hash", async () => {
    const events: Record<string, unknown>[] = [];
    const authorize = createBasicAuthorizer({ realm: "r", check: htpasswdCheck(text, (e) => events.push(e)) });
    const req = (u: string, p: string) => new Request("http://r/v2/", { headers: { authorization: basic(u, p) } });
    expect(await authorize(req("alice", "alice-pw"), [])).toBeUndefined();
    expect(await authorize(req("bob", "bob-pw"), [])).toBeUndefined();
    for (const [user, password] of [["carol", "abc"], ["dave", "x"], ["alice", "wrong"]]) {
      const refused = (await authorize(req(user!, password!), []))!;
      expect(refused.status, user).toBe(401);
      expect(refused.headers.get("www-authenticate")).toBe('Basic realm="r"');
    }
    const warnings = events.filter((e) => e.level === "warn");
    expect(warnings).toEqual([
      expect.objectContaining({ msg: expect.stringMatching(/not bcrypt/), line: 2, user: "carol" }),
      expect.objectContaining({ msg: expect.stringMatching(/not bcrypt/), line: 4, user: "dave" }),
    ]);
    expect(JSON.stringify(events)).not.toMatch(/W6ph5|apr1/);
  });
});

describe("createBasicAuthorizer", () => {
  const authorize = createBasicAuthorizer({ realm: "Registry Realm", check: htpasswdCheck(`alice:${alice}\n`) });
  const needed = [{ type: "repository", name: "a/b", actions: ["pull"] }];
  const req = (auth?: string, method = "GET") =>
    new Request("http://r/v2/a/b/tags/list", { method, headers: auth ? { authorization: auth } : {} });

  it("lets a valid user through, with every action", async () => {
    expect(await authorize(req(basic("alice", "alice-pw")), needed)).toBeUndefined();
    expect(await authorize(req(basic("alice", "alice-pw")), [])).toBeUndefined();
  });

  it.each([
    ["missing", undefined],
    ["wrong password", basic("alice", "nope")],
    ["unknown user", basic("carol", "alice-pw")],
    ["a Bearer token", "Bearer abc"],
  ])("answers 401 with a Basic challenge and UNAUTHORIZED (%s)", async (_what, auth) => {
    const res = (await authorize(req(auth), needed))!;
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Basic realm="Registry Realm"');
    const body = await res.json() as { errors: { code: string; detail: unknown }[] };
    expect(body.errors[0]!.code).toBe("UNAUTHORIZED");
    expect(body.errors[0]!.detail).toEqual([{ Type: "repository", Class: "", Name: "a/b", Action: "pull" }]);
  });

  it("refuses every credential with 400 DENIED (as Distribution 2.8) when the check fails, logs why, and tells the client nothing of it", async () => {
    const events: unknown[] = [];
    const failing = createBasicAuthorizer({ realm: "r", check: async () => { throw new Error("htpasswd line 3: boom"); }, log: (e) => events.push(e) });
    const res = (await failing(req(basic("alice", "alice-pw")), []))!;
    expect(res.status).toBe(400);
    expect(res.headers.get("www-authenticate")).toBeNull();
    const text = await res.text();
    expect(JSON.parse(text).errors[0].code).toBe("DENIED");
    expect(text).not.toContain("boom");
    expect(events).toEqual([expect.objectContaining({ level: "error", msg: "credential check failed" })]);
    // Without credentials the challenge still comes, as in Distribution.
    expect((await failing(req(undefined), []))!.status).toBe(401);
  });
});

describe("htpasswdCredentials", () => {
  let dir: string;
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), "htpasswd-")); });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  it("re-reads the file when it changes, at most once per interval", async () => {
    const path = join(dir, "htpasswd");
    await writeFile(path, `alice:${alice}\n`);
    const check = htpasswdCredentials({ path, checkIntervalMs: 0 });
    expect(await check("alice", "alice-pw")).toBeTruthy();
    expect(await check("bob", "bob-pw")).toBeUndefined();
    await writeFile(path, `alice:${alice}\nbob:${bob}\n`);
    expect(await check("bob", "bob-pw")).toBeTruthy();

    const slow = htpasswdCredentials({ path, checkIntervalMs: 60_000 });
    expect(await slow("bob", "bob-pw")).toBeTruthy();
    await writeFile(path, `alice:${alice}\n`);
    expect(await slow("bob", "bob-pw")).toBeTruthy(); // not checked again within the interval
    expect(await check("bob", "bob-pw")).toBeUndefined();
  });

  it("warns once per ignored line each time the file is read, not on every check", async () => {
    const path = join(dir, "mixed");
    await writeFile(path, `alice:${alice}\nbob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n`);
    const events: Record<string, unknown>[] = [];
    const check = htpasswdCredentials({ path, checkIntervalMs: 0, log: (e) => events.push(e) });
    expect(await check("alice", "alice-pw")).toBeTruthy();
    expect(await check("bob", "x")).toBeUndefined();
    expect(await check("alice", "alice-pw")).toBeTruthy();
    expect(events).toEqual([expect.objectContaining({ level: "warn", line: 2, user: "bob" })]);
    await writeFile(path, `alice:${alice}\nbob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\ncarol:plain\n`);
    expect(await check("alice", "alice-pw")).toBeTruthy();
    expect(events.map((e) => e.user)).toEqual(["bob", "bob", "carol"]);
  });

  it("throws for a malformed or unreadable file, naming the line, and recovers once fixed", async () => {
    const path = join(dir, "bad");
    await writeFile(path, `alice:${alice}\nbob\n`);
    const check = htpasswdCredentials({ path, checkIntervalMs: 0 });
    await expect(check("alice", "alice-pw")).rejects.toThrow(/line 2: expected "user:hash"/);
    await expect(htpasswdCredentials({ path: dir, checkIntervalMs: 0 })("alice", "x")).rejects.toThrow(/htpasswd/);
    await writeFile(path, `alice:${alice}\n`);
    expect(await check("alice", "alice-pw")).toBeTruthy();
  });
});
