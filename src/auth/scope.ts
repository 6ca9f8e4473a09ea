/**
 * The Distribution scope grammar `type:name:action[,action…]`, several scopes
 * separated by spaces, and the rules for whether granted access covers what
 * a route needs.
 *
 * @module
 */
import type { Access } from "./access.js";

/**
 * Parse one scope string (possibly several scopes separated by spaces) into
 * access entries. The type runs to the first `:`, the actions follow the last
 * `:`, and the name is everything between (so `repository:host:5000/app:pull`
 * works). Returns `undefined` when any part is malformed.
 */
export function parseScope(scope: string): Access[] | undefined {
  const out: Access[] = [];
  for (const item of scope.split(" ")) {
    if (item === "") continue;
    const first = item.indexOf(":");
    const last = item.lastIndexOf(":");
    if (first <= 0 || last === first) return undefined;
    const type = item.slice(0, first);
    const name = item.slice(first + 1, last);
    const actionText = item.slice(last + 1);
    if (name === "" || actionText === "") return undefined;
    const actions = actionText.split(",");
    if (actions.some((a) => a === "")) return undefined;
    out.push({ type, name, actions: [...new Set(actions)] });
  }
  return out;
}

/**
 * Merge access entries: entries for the same type and name are combined,
 * duplicate actions removed, first-seen order kept.
 */
export function mergeAccess(entries: Iterable<Access>): Access[] {
  const byKey = new Map<string, Access>();
  for (const e of entries) {
    const key = `${e.type}\u0000${e.name}`;
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, { type: e.type, name: e.name, actions: [...new Set(e.actions)] });
    else for (const a of e.actions) if (!seen.actions.includes(a)) seen.actions.push(a);
  }
  return [...byKey.values()];
}

/**
 * Parse and merge several scope values (repeated `scope` parameters, each
 * possibly space-separated). Returns `undefined` when any is malformed.
 */
export function parseScopes(values: Iterable<string>): Access[] | undefined {
  const all: Access[] = [];
  for (const v of values) {
    const parsed = parseScope(v);
    if (!parsed) return undefined;
    all.push(...parsed);
  }
  return mergeAccess(all);
}

/** Format access entries as one scope value: `type:name:a,b`, entries joined by a space. */
export function formatScope(access: readonly Access[]): string {
  return access.map((a) => `${a.type}:${a.name}:${a.actions.join(",")}`).join(" ");
}

/** Granted access compiled for fast lookups: `type\0name` → actions. */
export type AccessIndex = ReadonlyMap<string, ReadonlySet<string>>;

/** Compile granted access for {@link covers}. Malformed entries are skipped. */
export function indexAccess(granted: unknown): AccessIndex {
  const index = new Map<string, Set<string>>();
  if (!Array.isArray(granted)) return index;
  for (const e of granted as unknown[]) {
    if (typeof e !== "object" || e === null) continue;
    const { type, name, actions } = e as Record<string, unknown>;
    if (typeof type !== "string" || typeof name !== "string" || !Array.isArray(actions)) continue;
    const key = `${type}\u0000${name}`;
    let set = index.get(key);
    if (!set) index.set(key, (set = new Set()));
    for (const a of actions) if (typeof a === "string") set.add(a);
  }
  return index;
}

/**
 * Whether granted access allows every needed action. `*` granted covers any
 * action on that resource; a needed `*` (the catalog) must be granted as `*`.
 * Types and names compare exactly.
 */
export function covers(granted: AccessIndex, needed: readonly Access[]): boolean {
  for (const n of needed) {
    const set = granted.get(`${n.type}\u0000${n.name}`);
    if (!set) return false;
    if (set.has("*")) continue;
    for (const a of n.actions) if (!set.has(a)) return false;
  }
  return true;
}
