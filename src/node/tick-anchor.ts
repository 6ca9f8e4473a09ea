/**
 * One of Node's tick objects, kept for the life of the process.
 *
 * V8 keeps a hidden class (map) only while some object has it (and for two
 * full collections after). `process.nextTick` builds its tick object with a
 * literal of computed keys, `{ [async_id_symbol]: …, [trigger_async_id_symbol]:
 * …, callback, args }`, and Node's streams call it several times per request.
 * When a full collection runs while no tick object is alive (V8's memory
 * reducer runs three in a row once a server goes quiet), the maps of that
 * literal are collected; the next tick object gets new ones, and after a few
 * such collections the literal's inline caches have seen more maps than they
 * hold and stay megamorphic for the life of the process: every later tick
 * object is then built in V8's runtime (~2.5 µs of a manifest GET here).
 * Holding one tick object keeps its maps, so the caches stay monomorphic.
 * test/adapters/tick-anchor.test.ts shows both on the running Node.
 *
 * @module
 */
import { executionAsyncResource } from "node:async_hooks";

/**
 * Where the tick object is held: a property of `globalThis` under a registered symbol. A module variable that
 * nothing in the package reads is a dead store to a bundler, and the build dropped it (tsup's tree shaking left
 * the call to `executionAsyncResource()` and nothing else); a store to a global object is kept. Copies of
 * registry-kit in one process share it.
 */
const ANCHOR = Symbol.for("registry-kit.tickAnchor");
const holder = globalThis as unknown as Record<symbol, object | undefined>;
let asked = false;

/**
 * Keep one tick object alive (once per process; later calls do nothing).
 * Inside a `nextTick` callback, `executionAsyncResource()` is that tick's object.
 */
export function anchorTickObjects(): void {
  if (asked) return;
  asked = true;
  process.nextTick(() => {
    const resource: unknown = executionAsyncResource();
    // Bun and Deno have no tick objects of Node's kind: whatever they answer, holding it costs nothing.
    if (typeof resource === "object" && resource !== null) holder[ANCHOR] ??= resource;
  });
}

/** Whether a tick object is held (for tests). */
export function tickObjectAnchored(): boolean {
  return holder[ANCHOR] !== undefined;
}
