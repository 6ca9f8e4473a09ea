/**
 * Where the event emitter reports a failing listener or sink and dropped
 * events: the service's `log` hook, or, when the service was given none, the
 * console. Library code otherwise never writes to the console; this is the
 * exception, because a broken listener would else fail without a trace.
 *
 * @module
 */
import { silent, type LogEvent, type LogHook } from "../http/log.js";

/** Console lines at most this often per emitter; the lines between are counted in the next one. */
const CONSOLE_EVERY_MS = 60_000;

/**
 * `log` itself, unless it is the default {@link silent}: then a hook that
 * writes to `console.error` (the first record at once, then at most one line
 * a minute, saying how many records it left out).
 */
export function emitterLog(log: LogHook, write: (line: string) => void = (line) => console.error(line)): LogHook {
  if (log !== silent) return log;
  let last = -Infinity;
  let skipped = 0;
  return (event: LogEvent) => {
    const now = Date.now();
    if (now - last < CONSOLE_EVERY_MS) {
      skipped += 1;
      return;
    }
    last = now;
    const line = JSON.stringify(skipped > 0 ? { ...event, skippedBefore: skipped } : event);
    skipped = 0;
    write(`registry-kit: ${line} (pass a log hook to the service to receive every such record)`);
  };
}
