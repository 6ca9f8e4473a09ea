/**
 * Validation of the authority (`Host`, `X-Forwarded-Host`) a request names,
 * before it becomes part of an absolute URL the handlers build links from.
 *
 * @module
 */

const REG_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;
const IPV6 = /^\[[0-9A-Fa-f:.]+\]$/;
const PORT = /^[0-9]{1,5}$/;

/**
 * Check a `Host`-style value (`host`, `host:port`, `[v6]`, `[v6]:port`) and
 * return it normalised (lower case), or `undefined` when it is not a plain
 * authority: empty, with user info, a path, spaces, an out-of-range port, or
 * anything the URL parser would read differently.
 */
export function parseHost(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  // Nearly every request of a server names the same host: check it once.
  if (value === last.value) return last.host;
  const host = checkHost(value);
  last = { value, host };
  return host;
}

let last: { value: string | undefined; host: string | undefined } = { value: undefined, host: undefined };

function checkHost(value: string): string | undefined {
  const host = value.trim();
  if (host.length === 0 || host.length > 255) return undefined;
  let name = host;
  let port: string | undefined;
  const colon = host.lastIndexOf(":");
  if (colon !== -1 && !host.endsWith("]")) {
    name = host.slice(0, colon);
    port = host.slice(colon + 1);
    if (!PORT.test(port) || Number(port) > 65535) return undefined;
  }
  if (!(REG_NAME.test(name) || IPV6.test(name))) return undefined;
  try {
    const url = new URL(`http://${host}/`);
    if (url.hostname !== name.toLowerCase() && !IPV6.test(name)) return undefined;
    return url.host === "" ? undefined : host.toLowerCase();
  } catch {
    return undefined;
  }
}
