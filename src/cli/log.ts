/**
 * The CLI's log hook: one line per event on stderr, filtered by `log.level`.
 *
 * @module
 */
import type { LogEvent, LogHook, LogLevel } from "../http/log.js";

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** `2026-11-21T05:16:22.000Z warn no uploadSecret key=value …` */
export function formatEvent(event: LogEvent, now = new Date()): string {
  const { level, msg, ...fields } = event;
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${formatValue(v)}`)
    .join(" ");
  return `${now.toISOString()} ${level} ${msg}${rest ? ` ${rest}` : ""}`;
}

function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "string") return /^[\w./:@-]+$/.test(value) ? value : JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A hook printing events at `level` and above with `write`. */
export function cliLogHook(level: LogLevel, write: (line: string) => void): LogHook {
  const min = RANK[level];
  return (event) => {
    if ((RANK[event.level] ?? 3) >= min) write(formatEvent(event));
  };
}
