import { describe, expect, it } from "vitest";
import { covers, formatScope, parseScope } from "../../src/auth/index.js";
import { indexAccess } from "../../src/auth/scope.js";
import { challengeDetail, formatChallenge } from "../../src/auth/verifier/challenge.js";
import { compilePattern } from "../../src/auth/token-service/policy.js";
import { parseScopes } from "../../src/auth/scope.js";

describe("scope grammar", () => {
  it("parses type:name:actions, names with colons, several scopes", () => {
    expect(parseScope("repository:library/alpine:pull,push")).toEqual([{ type: "repository", name: "library/alpine", actions: ["pull", "push"] }]);
    expect(parseScope("repository:localhost:5000/app:pull")).toEqual([{ type: "repository", name: "localhost:5000/app", actions: ["pull"] }]);
    expect(parseScope("registry:catalog:*")).toEqual([{ type: "registry", name: "catalog", actions: ["*"] }]);
    expect(parseScope("repository(plugin):x/y:pull")).toEqual([{ type: "repository(plugin)", name: "x/y", actions: ["pull"] }]);
    expect(parseScope("repository:a:pull repository:b:push")).toHaveLength(2);
    expect(parseScope("repository:a:pull,pull")).toEqual([{ type: "repository", name: "a", actions: ["pull"] }]);
  });
  it("rejects malformed scopes", () => {
    for (const s of ["repository", "repository:a", ":a:pull", "repository::pull", "repository:a:", "repository:a:pull,,push"]) {
      expect(parseScope(s), s).toBeUndefined();
    }
  });
  it("merges repeated values", () => {
    expect(parseScopes(["repository:a:pull", "repository:a:push repository:b:pull", "repository:a:pull"])).toEqual([
      { type: "repository", name: "a", actions: ["pull", "push"] },
      { type: "repository", name: "b", actions: ["pull"] },
    ]);
  });
  it("formats back", () => {
    expect(formatScope([{ type: "repository", name: "a/b", actions: ["pull", "push"] }, { type: "repository", name: "c", actions: ["pull"] }])).toBe(
      "repository:a/b:pull,push repository:c:pull",
    );
  });
});

describe("covers", () => {
  const idx = indexAccess([
    { type: "repository", name: "a", actions: ["pull"] },
    { type: "repository", name: "b", actions: ["*"] },
    { type: "registry", name: "catalog", actions: ["*"] },
    { junk: true },
    { type: "repository", name: "c", actions: "pull" },
  ]);
  it("needs every action", () => {
    expect(covers(idx, [{ type: "repository", name: "a", actions: ["pull"] }])).toBe(true);
    expect(covers(idx, [{ type: "repository", name: "a", actions: ["pull", "push"] }])).toBe(false);
    expect(covers(idx, [{ type: "repository", name: "b", actions: ["pull", "push", "delete"] }])).toBe(true);
    expect(covers(idx, [{ type: "registry", name: "catalog", actions: ["*"] }])).toBe(true);
    expect(covers(idx, [{ type: "repository", name: "c", actions: ["pull"] }])).toBe(false);
    expect(covers(idx, [{ type: "repository", name: "A", actions: ["pull"] }])).toBe(false);
    expect(covers(idx, [])).toBe(true);
    expect(covers(indexAccess("nonsense"), [])).toBe(true);
  });
});

describe("challenge", () => {
  it("formats exactly like Distribution", () => {
    expect(formatChallenge({ realm: "https://a/token", service: "reg" })).toBe('Bearer realm="https://a/token",service="reg"');
    expect(
      formatChallenge({ realm: "r", service: "s", needed: [{ type: "repository", name: "x", actions: ["pull", "push"] }], error: "insufficient_scope" }),
    ).toBe('Bearer realm="r",service="s",scope="repository:x:pull,push",error="insufficient_scope"');
    expect(challengeDetail([])).toBeNull();
    expect(challengeDetail([{ type: "registry", name: "catalog", actions: ["*"] }])).toEqual([{ Type: "registry", Class: "", Name: "catalog", Action: "*" }]);
  });
});

describe("ACL patterns", () => {
  it("globs, regexes and ${account}", () => {
    expect(compilePattern("library/*")("library/a/b", "")).toBe(true);
    expect(compilePattern("library/*")("librarything", "")).toBe(false);
    expect(compilePattern("lib?")("libx", "")).toBe(true);
    expect(compilePattern("a.b")("axb", "")).toBe(false);
    expect(compilePattern("/.+/")("", "")).toBe(false);
    expect(compilePattern("/.+/")("bob", "")).toBe(true);
    expect(compilePattern("/foo|bar/")("foobar", "")).toBe(false);
    expect(compilePattern("${account}/*")("alice/x", "alice")).toBe(true);
    expect(compilePattern("${account}/*")("alice/x", "bob")).toBe(false);
    // An account name with glob or regex characters matches only literally.
    expect(compilePattern("${account}/*")("anything/x", "*")).toBe(false);
    expect(compilePattern("/${account}-.*/")("a.b-x", "a.b")).toBe(true);
    expect(compilePattern("/${account}-.*/")("axb-x", "a.b")).toBe(false);
  });
});
