/**
 * Policies and lifecycle in the `registrykit` section (docs/policies.md):
 * `registrykit.policy.immutabletags`, `registrykit.policy.quotas`,
 * `registrykit.retention` and the scheduled garbage collection
 * `registrykit.gc`.
 *
 * @module
 */
import type { ImmutableTagPatterns, QuotaLimits, RetentionRule } from "../../registry/index.js";
import { isMap } from "./config-env.js";
import type { ConfigReader } from "./config-reader.js";
import { bool, byteSize, ConfigError, duration, stringList } from "./config-values.js";

/** `registrykit.policy`: the write policies of the registry. */
export interface PolicyConfig {
  /** `immutabletags`: tag globs, or repository glob → tag globs. */
  immutableTags?: ImmutableTagPatterns;
  /** `quotas`: repository glob → bytes. */
  quotas?: QuotaLimits;
}

/** `registrykit.gc`: garbage collection run by the server. */
export interface GcScheduleConfig {
  /** `interval`: from the start (or the end of the previous run) to the next run. */
  intervalMs: number;
  /** `removeuntagged`: also remove manifests no tag references, in every repository. */
  removeUntagged: boolean;
  /** `graceperiod`: nothing younger is removed, in seconds (default 3600). */
  gracePeriodSeconds: number;
  /** `dryrun`: only log what would go. */
  dryRun: boolean;
}

/** Read `registrykit.policy`; `undefined` when it sets nothing. */
export function resolvePolicy({ get, named }: ConfigReader): PolicyConfig | undefined {
  const policy: PolicyConfig = {};
  const tags = get("registrykit.policy.immutabletags");
  if (tags !== undefined && tags !== null) {
    const key = named("registrykit.policy.immutabletags");
    if (isMap(tags)) {
      const byRepository: Record<string, string[]> = {};
      for (const [repository, globs] of Object.entries(tags)) byRepository[repository] = stringList(`${key}.${repository}`, globs);
      policy.immutableTags = byRepository;
    } else policy.immutableTags = stringList(key, tags);
  }
  const quotas = get("registrykit.policy.quotas");
  if (quotas !== undefined && quotas !== null) {
    const key = named("registrykit.policy.quotas");
    if (!isMap(quotas)) throw new ConfigError(key, 'expected a map of repository glob to size, e.g. { "team-a/*": 10GiB }');
    const limits: Record<string, number> = {};
    for (const [glob, size] of Object.entries(quotas)) limits[glob] = byteSize(`${key}.${glob}`, size);
    policy.quotas = limits;
  }
  return policy.immutableTags || policy.quotas ? policy : undefined;
}

const RULE_KEYS = ["repositories", "tags", "keeplast", "olderthan"];

/** Read `registrykit.retention` (a list of rules); `undefined` when absent. */
export function resolveRetention({ get, named }: ConfigReader): RetentionRule[] | undefined {
  const value = get("registrykit.retention");
  if (value === undefined || value === null) return undefined;
  const key = named("registrykit.retention");
  if (!Array.isArray(value)) throw new ConfigError(key, "expected a list of rules (repositories, tags, keeplast, olderthan)");
  return value.map((item, i) => {
    const at = `${key}[${i}]`;
    if (!isMap(item)) throw new ConfigError(at, "expected a map with repositories and keeplast, olderthan or tags");
    // A misspelt key would leave a rule that keeps less than meant: refused, not ignored.
    const unknown = Object.keys(item).find((k) => !RULE_KEYS.includes(k));
    if (unknown !== undefined) throw new ConfigError(`${at}.${unknown}`, `unknown key; a rule has ${RULE_KEYS.join(", ")}`);
    if (item.repositories === undefined) throw new ConfigError(`${at}.repositories`, "required: the repository globs the rule applies to");
    const rule: RetentionRule = { repositories: stringList(`${at}.repositories`, item.repositories) };
    if (item.tags !== undefined) rule.tags = stringList(`${at}.tags`, item.tags);
    if (item.keeplast !== undefined) rule.keepLast = wholeNumber(`${at}.keeplast`, item.keeplast);
    if (item.olderthan !== undefined) rule.olderThanSeconds = age(`${at}.olderthan`, item.olderthan) / 1000;
    if (rule.keepLast === undefined && rule.olderThanSeconds === undefined && rule.tags === undefined) {
      throw new ConfigError(at, "give at least one of keeplast, olderthan, tags (a rule with none would remove every tag)");
    }
    return rule;
  });
}

/** Read `registrykit.gc`; `undefined` when absent or `enabled: false`. */
export function resolveGcSchedule({ get, opt, named }: ConfigReader): GcScheduleConfig | undefined {
  const k = (key: string) => `registrykit.gc.${key}`;
  if (get("registrykit.gc") === undefined || opt(k("enabled"), bool) === false) return undefined;
  const intervalMs = opt(k("interval"), duration);
  if (intervalMs === undefined) throw new ConfigError(named(k("interval")), 'required: how often to collect, e.g. "24h"');
  if (intervalMs < 1000) throw new ConfigError(named(k("interval")), "must be at least 1s");
  const grace = opt(k("graceperiod"), duration) ?? 3_600_000;
  return { intervalMs, removeUntagged: opt(k("removeuntagged"), bool) ?? false, gracePeriodSeconds: Math.round(grace / 1000), dryRun: opt(k("dryrun"), bool) ?? false };
}

function wholeNumber(key: string, value: unknown): number {
  const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) throw new ConfigError(key, `expected a whole number, got ${JSON.stringify(value)}`);
  return n;
}

/** A duration as `duration` reads it, or a number of days such as `"30d"`. */
function age(key: string, value: unknown): number {
  const days = typeof value === "string" ? /^\s*(\d+)d\s*$/.exec(value) : null;
  return days ? Number(days[1]) * 86_400_000 : duration(key, value);
}
