/**
 * Setup file of the workerd run: unhandled rejections judged as Node judges
 * them. workerd emits `unhandledRejection` the moment a promise rejects with
 * no handler yet, and `rejectionHandled` when one comes a few microtasks later
 * (a promise returned from an async function, a stream's error); Node waits
 * until the microtask queue is drained. vitest fails a run on every
 * `unhandledRejection`, so here one is passed on only when it is still
 * unhandled a macrotask later: real leaks still fail the run.
 */
const MARK = Symbol.for("registry-kit.workerd.deferred-unhandled-rejections");
type Emit = (event: string | symbol, ...args: unknown[]) => boolean;
const proc = process as unknown as { emit: Emit; on(event: string, listener: (...args: unknown[]) => void): unknown; [MARK]?: true };

if (!proc[MARK]) {
  proc[MARK] = true;
  const emit = proc.emit.bind(process) as Emit;
  const pending = new Set<unknown>();
  proc.on("rejectionHandled", (promise) => void pending.delete(promise));
  proc.emit = (event, ...args) => {
    if (event !== "unhandledRejection") return emit(event, ...args);
    const [, promise] = args;
    pending.add(promise);
    setTimeout(() => {
      if (pending.delete(promise)) emit(event, ...args);
    }, 0);
    return true;
  };
}
