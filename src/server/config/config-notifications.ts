/**
 * `notifications` of Distribution's config: `endpoints` (a list of `name`,
 * `url`, `headers`, `timeout`, `threshold`, `backoff`, `ignoredmediatypes`,
 * `ignore {mediatypes, actions}`, `disabled`) and
 * `events.includereferences`. The all-in-one server hands them to
 * `createNotifier`, whose outbox lives in the registry's storage.
 *
 * @module
 */
import type { WebhookEndpoint } from "../../events/endpoint.js";
import type { ConfigReader } from "./config-reader.js";
import { bool, ConfigError, duration, headerMap, httpUrl, positiveInt, str, stringList } from "./config-values.js";

/** The notifications of the all-in-one server; absent when no endpoint is configured. */
export interface NotificationsConfig {
  /** The endpoints, Distribution's durations in milliseconds. */
  endpoints: WebhookEndpoint[];
  /** `events.includereferences`. */
  includeReferences: boolean;
}

const ENDPOINT_KEYS = new Set(["name", "url", "headers", "timeout", "threshold", "backoff", "ignoredmediatypes", "ignore", "disabled"]);

/** Read `notifications`; warnings (unknown endpoint keys) are pushed to `warnings`. */
export function resolveNotifications({ get, opt, named }: ConfigReader, warnings: string[]): NotificationsConfig | undefined {
  const list = get("notifications.endpoints");
  if (list === undefined || list === null) return undefined;
  if (!Array.isArray(list)) throw new ConfigError(named("notifications.endpoints"), "expected a list of endpoints");
  const names = new Set<string>();
  const endpoints = list.map((entry: unknown, i): WebhookEndpoint => {
    const at = `${named("notifications.endpoints")}[${i}]`;
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) throw new ConfigError(at, "expected a map");
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) if (!ENDPOINT_KEYS.has(key)) warnings.push(`${at}.${key}: unknown key, ignored`);
    const name = str(`${at}.name`, e.name);
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) throw new ConfigError(`${at}.name`, "expected 1 to 100 letters, digits, '.', '_' or '-'");
    if (names.has(name)) throw new ConfigError(`${at}.name`, `${JSON.stringify(name)} is used by two endpoints`);
    names.add(name);
    const endpoint: WebhookEndpoint = { name, url: httpUrl(`${at}.url`, e.url) };
    const headers = headerMap(`${at}.headers`, e.headers);
    if (headers.length > 0) {
      const map: Record<string, string[]> = {};
      for (const [h, v] of headers) (map[h] ??= []).push(v);
      endpoint.headers = map;
    }
    if (e.timeout !== undefined) endpoint.timeout = atLeast(`${at}.timeout`, duration(`${at}.timeout`, e.timeout), 1);
    if (e.backoff !== undefined) endpoint.backoff = duration(`${at}.backoff`, e.backoff);
    if (e.threshold !== undefined) endpoint.threshold = positiveInt(`${at}.threshold`, e.threshold);
    if (e.disabled !== undefined) endpoint.disabled = bool(`${at}.disabled`, e.disabled);
    if (e.ignoredmediatypes !== undefined) endpoint.ignoredmediatypes = stringList(`${at}.ignoredmediatypes`, e.ignoredmediatypes);
    if (e.ignore !== undefined) {
      if (e.ignore === null || typeof e.ignore !== "object" || Array.isArray(e.ignore)) throw new ConfigError(`${at}.ignore`, "expected a map");
      const ignore = e.ignore as Record<string, unknown>;
      endpoint.ignore = {
        ...(ignore.mediatypes !== undefined && { mediatypes: stringList(`${at}.ignore.mediatypes`, ignore.mediatypes) }),
        ...(ignore.actions !== undefined && { actions: stringList(`${at}.ignore.actions`, ignore.actions) }),
      };
    }
    return endpoint;
  });
  if (endpoints.length === 0) return undefined;
  return { endpoints, includeReferences: opt("notifications.events.includereferences", bool) ?? false };
}

function atLeast(key: string, ms: number, min: number): number {
  if (ms < min) throw new ConfigError(key, `must be at least ${min}ms`);
  return ms;
}
