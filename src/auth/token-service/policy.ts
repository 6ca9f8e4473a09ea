/**
 * Access policy: who gets which of the requested actions. A policy is any
 * function {@link AccessPolicy}; {@link aclPolicy} gives docker_auth-style
 * ordered rules, and {@link defaultPolicy} the built-in defaults.
 *
 * @module
 */
import type { Access, Principal } from "../access.js";
import { globToRegex } from "../../util/glob.js";

/**
 * Decide what to grant. Receives the caller (`undefined` for anonymous) and
 * the requested access (merged, de-duplicated); resolves to the granted
 * access. Granting less is normal (it gives a token with fewer actions, or
 * an empty `access`); the token service never grants more than was requested.
 */
export type AccessPolicy = (caller: Principal | undefined, requested: readonly Access[]) => Promise<Access[]>;

/**
 * What one rule matches. Each string is a glob (`*` any run of characters
 * including `/`, `?` one character) or, written `/…/`, a regular expression
 * that must match the whole value. `${account}` in a pattern is replaced by
 * the caller's name (`""` for anonymous), escaped. Omitted fields match anything.
 */
export interface AclMatch {
  /** The caller's name; anonymous callers have account `""`. */
  account?: string;
  /** The resource type, e.g. `repository`, `registry`. */
  type?: string;
  /** The resource name, e.g. `library/alpine`, `catalog`. */
  name?: string;
  /** Match only administrators (`true`) or only non-administrators (`false`). */
  admin?: boolean;
}

/** One ACL rule: when `match` matches, grant `actions` (`"*"` grants every requested action; `[]` denies). */
export interface AclRule {
  /** What the rule applies to; every given field must match. */
  match: AclMatch;
  /** The actions granted when the rule matches: `["*"]` every requested action, `[]` none (an explicit deny). */
  actions: readonly string[];
  /** Free text for people reading the rules; ignored. */
  comment?: string;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

type Matcher = (value: string, account: string) => boolean;

/** Compile one pattern of an {@link AclMatch}. */
export function compilePattern(pattern: string): Matcher {
  const isRegex = pattern.length >= 2 && pattern.startsWith("/") && pattern.endsWith("/");
  const body = isRegex ? pattern.slice(1, -1) : pattern;
  const hasVar = body.includes("${account}");
  const build = (account: string) => {
    const parts = body.split("${account}");
    const src = isRegex ? parts.join(escapeRegex(account)) : parts.map(globToRegex).join(escapeRegex(account));
    return new RegExp(`^(?:${src})$`, "s");
  };
  if (!hasVar) {
    const re = build("");
    return (value) => re.test(value);
  }
  const cache = new Map<string, RegExp>();
  return (value, account) => {
    let re = cache.get(account);
    if (!re) {
      re = build(account);
      if (cache.size > 1024) cache.clear();
      cache.set(account, re);
    }
    return re.test(value);
  };
}

/**
 * An ordered rule list in the style of docker_auth: for each requested
 * resource, the first rule whose `match` fits decides; its actions are
 * intersected with the requested ones. No matching rule → nothing.
 */
export function aclPolicy(rules: readonly AclRule[]): AccessPolicy {
  const compiled = rules.map((r) => ({
    account: r.match.account === undefined ? undefined : compilePattern(r.match.account),
    type: r.match.type === undefined ? undefined : compilePattern(r.match.type),
    name: r.match.name === undefined ? undefined : compilePattern(r.match.name),
    admin: r.match.admin,
    actions: r.actions,
  }));
  return async (caller, requested) => {
    const account = caller?.name ?? "";
    const admin = caller?.admin ?? false;
    const granted: Access[] = [];
    for (const req of requested) {
      const rule = compiled.find(
        (r) =>
          (r.admin === undefined || r.admin === admin) &&
          (!r.account || r.account(account, account)) &&
          (!r.type || r.type(req.type, account)) &&
          (!r.name || r.name(req.name, account)),
      );
      if (!rule) continue;
      const actions = rule.actions.includes("*") ? [...req.actions] : req.actions.filter((a) => rule.actions.includes(a));
      if (actions.length > 0) granted.push({ type: req.type, name: req.name, actions });
    }
    return granted;
  };
}

/** Options of {@link defaultRules} / {@link defaultPolicy}. */
export interface DefaultPolicyOptions {
  /** Repository globs anyone (anonymous included) may pull, e.g. `["library/*", "public/*"]`. */
  publicRepositories?: readonly string[];
}

/**
 * The built-in rules, in order: administrators get everything; a signed-in
 * user gets pull, push and delete in `<username>/*`; everyone (anonymous
 * included) gets pull on the public repositories; nothing else.
 */
export function defaultRules(options: DefaultPolicyOptions = {}): AclRule[] {
  const rules: AclRule[] = [
    { match: { admin: true }, actions: ["*"], comment: "administrators have every right" },
    {
      match: { account: "/.+/", type: "repository", name: "${account}/*" },
      actions: ["pull", "push", "delete"],
      comment: "users own their namespace",
    },
  ];
  for (const glob of options.publicRepositories ?? []) {
    rules.push({ match: { type: "repository", name: glob }, actions: ["pull"], comment: "public repositories" });
  }
  return rules;
}

/** {@link aclPolicy} over {@link defaultRules}. */
export function defaultPolicy(options: DefaultPolicyOptions = {}): AccessPolicy {
  return aclPolicy(defaultRules(options));
}
