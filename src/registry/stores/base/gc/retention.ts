/**
 * Retention: which tags garbage collection removes before it marks, by rules
 * per repository glob. A rule keeps a repository's tags that are among the
 * `keepLast` most recently pushed, pushed less than `olderThanSeconds` ago, or
 * matching `tags`; the other tags of the repository go (the manifests they
 * leave untagged, and then their blobs, go in the same run). Several rules on
 * one repository keep the union of what each keeps. A protected tag (an
 * immutable one) is never removed.
 *
 * A tag's push time is its link's modification time in storage: pushing a tag
 * again, even to the same digest, makes it new.
 *
 * @module
 */
import { anyGlob } from "../../../../util/glob.js";
import { tagLink } from "../layout.js";
import { mapLimited } from "../storage-io.js";
import { CONCURRENCY, type CompiledRule, type GcRun, type Repository } from "./state.js";

export type { CompiledRule };

/** One retention rule; at least one of `keepLast`, `olderThanSeconds`, `tags` must be given. */
export interface RetentionRule {
  /** Globs of the repositories the rule applies to (`*` any run of characters, `/` included; `?` one). */
  repositories: string | readonly string[];
  /** Tags matching any of these globs are kept. */
  tags?: string | readonly string[];
  /** The most recently pushed `keepLast` tags are kept. */
  keepLast?: number;
  /** Tags pushed less than this many seconds ago are kept. */
  olderThanSeconds?: number;
}

const list = (value: string | readonly string[] | undefined): readonly string[] => (value === undefined ? [] : typeof value === "string" ? [value] : value);

/** Check and compile `rules` against the run's clock; throws `TypeError` naming the rule at fault. */
export function compileRetention(rules: readonly RetentionRule[], now: number): CompiledRule[] {
  return rules.map((rule, i) => {
    const repositories = list(rule.repositories);
    const tags = list(rule.tags);
    if (repositories.length === 0) throw new TypeError(`retention rule ${i}: repositories must name at least one glob`);
    const { keepLast, olderThanSeconds } = rule;
    if (keepLast !== undefined && !(Number.isSafeInteger(keepLast) && keepLast >= 0)) throw new TypeError(`retention rule ${i}: keepLast must be a whole number`);
    if (olderThanSeconds !== undefined && !(Number.isFinite(olderThanSeconds) && olderThanSeconds >= 0)) throw new TypeError(`retention rule ${i}: olderThanSeconds must be a number of seconds`);
    if (keepLast === undefined && olderThanSeconds === undefined && tags.length === 0) {
      throw new TypeError(`retention rule ${i}: give at least one of keepLast, olderThanSeconds, tags (a rule with none would remove every tag)`);
    }
    return {
      repository: anyGlob(repositories),
      tag: anyGlob(tags),
      keepLast: keepLast ?? 0,
      keepAfter: olderThanSeconds === undefined ? Infinity : now - olderThanSeconds * 1000,
    };
  });
}

/** Remove (or in a dry run, report) the tags no rule keeps; the model's tags are updated either way. */
export async function applyRetention(run: GcRun): Promise<void> {
  if (run.retention.length === 0) return;
  for (const repo of run.repos.values()) {
    const rules = run.retention.filter((r) => r.repository(repo.name));
    if (rules.length > 0 && repo.tags.size > 0) await retainIn(run, repo, rules);
  }
}

async function retainIn(run: GcRun, repo: Repository, rules: CompiledRule[]): Promise<void> {
  const names = [...repo.tags.keys()];
  const infos = await mapLimited(names, CONCURRENCY, (tag) => run.storage.stat(tagLink(repo.name, tag)));
  const pushed = new Map(names.map((tag, i) => [tag, infos[i]?.modified.getTime() ?? 0]));
  // Newest first; equal times by name, so a run is repeatable.
  const byAge = [...names].sort((a, b) => pushed.get(b)! - pushed.get(a)! || (a < b ? -1 : a > b ? 1 : 0));
  const kept = new Set<string>();
  for (const rule of rules) {
    byAge.slice(0, rule.keepLast).forEach((tag) => kept.add(tag));
    for (const tag of names) if (rule.tag(tag) || pushed.get(tag)! > rule.keepAfter) kept.add(tag);
  }
  for (const tag of names) {
    if (kept.has(tag) || run.protectTag(repo.name, tag)) continue;
    if (!run.dryRun) {
      // Pushed again since the scan: it is new now, leave it.
      const info = await run.storage.stat(tagLink(repo.name, tag));
      if (!info || info.modified.getTime() !== pushed.get(tag)) continue;
      await run.storage.delete(tagLink(repo.name, tag));
    }
    repo.tags.delete(tag);
    run.retired.add(`${repo.name}:${tag}`);
    run.report.tags.removed.push(`${repo.name}:${tag}`);
    run.log({ level: "info", msg: run.dryRun ? "gc would remove tag" : "gc removed tag", repository: repo.name, tag });
  }
}
