/**
 * The log hook. Library code never writes to the console: every service takes
 * an optional `log` function and reports through it. Reasons for refusing a
 * token, storage failures and the like go here, never to the client.
 *
 * @module
 */

/** Severity of a {@link LogEvent}. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** One structured log record. `msg` is a short constant phrase; details go in fields. */
export interface LogEvent {
  /** Severity. */
  level: LogLevel;
  /** A short, fixed message; details are further fields of the event. */
  msg: string;
  [field: string]: unknown;
}

/** Receives log records. Must not throw; must never be given secrets. */
export type LogHook = (event: LogEvent) => void;

/** The default hook: drops everything. */
export const silent: LogHook = () => {};
