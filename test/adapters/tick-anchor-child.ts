/**
 * Child of tick-anchor.test.ts, run with `--expose-gc --allow-natives-syntax`:
 * `none` leaves the tick objects alone, `listener` builds the Node adapter's
 * listeners (which anchor one). Then eight bursts of `nextTick`, each followed
 * by a full collection while no tick object is alive, and the inline-cache
 * states of the tick object literal's computed keys as one JSON line.
 */
import { createNodeListeners } from "../../src/node/listener.js";
import { tickObjectAnchored } from "../../src/node/tick-anchor.js";

const mode = process.argv[2];
if (mode === "listener") createNodeListeners(() => new Response(null));

const gc = (globalThis as { gc?: () => void }).gc!;
const burst = (done: () => void): void => {
  let left = 20_000;
  const step = (): void => (--left > 0 ? process.nextTick(step) : done());
  process.nextTick(step);
};

function report(): void {
  // %DebugPrint writes to stdout through C's buffered stdio; process.exit flushes it (a natural exit need not).
  new Function("f", "%DebugPrint(f)")(process.nextTick);
  process.stdout.write(`\n${JSON.stringify({ anchored: tickObjectAnchored() })}\n`, () => process.exit(0));
}

const round = (i: number): void => {
  if (i === 8) return report();
  burst(() => setTimeout(() => {
    gc();
    round(i + 1);
  }, 10));
};
setTimeout(() => round(0), 10);
