/**
 * Child of tick-anchor.test.ts, run with `--expose-gc --allow-natives-syntax`:
 * `none` leaves the tick objects alone, `listener` builds the Node adapter's
 * listeners (which anchor one), `bundled <file>` builds them from a build of
 * registry-kit/node (what users install). Then sixteen bursts of `nextTick`,
 * each followed by a full collection while no tick object is alive (a site
 * turns megamorphic after its fifth map; sixteen rounds leave room for rounds
 * where something else of the process held a tick object at the collection:
 * CI once saw one site of four megamorphic after eight); then `%DebugPrint` of
 * `nextTick` (its feedback: the states of the literal's define sites) and a
 * last JSON line saying whether a tick object is held.
 */
import { pathToFileURL } from "node:url";
import { createNodeListeners } from "../../src/node/listener.js";
import { tickObjectAnchored } from "../../src/node/tick-anchor.js";

const mode = process.argv[2];
if (mode === "listener") createNodeListeners(() => new Response(null));
if (mode === "bundled") {
  const built = (await import(pathToFileURL(process.argv[3]!).href)) as { createNodeListeners: typeof createNodeListeners };
  built.createNodeListeners(() => new Response(null));
}

const gc = (globalThis as { gc?: () => void }).gc!;
const burst = (done: () => void): void => {
  let left = 20_000;
  const step = (): void => (--left > 0 ? process.nextTick(step) : done());
  process.nextTick(step);
};

function report(): void {
  // Exit once the JSON line is out, so that nothing after the report can add to stdout.
  new Function("f", "%DebugPrint(f)")(process.nextTick);
  process.stdout.write(`\n${JSON.stringify({ anchored: tickObjectAnchored() })}\n`, () => process.exit(0));
}

const ROUNDS = 16;
const round = (i: number): void => {
  if (i === ROUNDS) return report();
  burst(() => setTimeout(() => {
    gc();
    round(i + 1);
  }, 10));
};
setTimeout(() => round(0), 10);
