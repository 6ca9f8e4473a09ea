/**
 * `notifications` of config.yml: Distribution's endpoint keys and
 * `events.includereferences`, read into the notifier's options; bad values
 * name their key.
 */
import { describe, expect, it } from "vitest";
import { parseConfigText, resolveConfig } from "../../src/server/config/config.js";
import { configError } from "./config-error.js";

function resolve(yaml: string) {
  return resolveConfig({ document: parseConfigText(yaml), env: {}, cwd: "/srv" });
}

function failure(yaml: string): string {
  return configError(() => resolve(yaml)).message;
}

const BASE = "version: 0.1\nstorage:\n  inmemory: {}\n";

describe("notifications in config.yml", () => {
  it("reads every endpoint key of Distribution, durations in milliseconds, and includereferences", () => {
    const { config, warnings } = resolve(`${BASE}notifications:
  events:
    includereferences: true
  endpoints:
    - name: alistener
      disabled: false
      url: https://my.listener.com/event
      headers:
        Authorization: [Bearer abc]
      timeout: 1s
      threshold: 10
      backoff: 1s
      ignoredmediatypes:
        - application/octet-stream
      ignore:
        mediatypes: [application/vnd.oci.image.config.v1+json]
        actions: [pull]
      color: blue
    - name: second
      url: http://127.0.0.1:9000/
`);
    expect(config.notifications).toEqual({
      includeReferences: true,
      endpoints: [
        {
          name: "alistener",
          url: "https://my.listener.com/event",
          disabled: false,
          headers: { Authorization: ["Bearer abc"] },
          timeout: 1000,
          threshold: 10,
          backoff: 1000,
          ignoredmediatypes: ["application/octet-stream"],
          ignore: { mediatypes: ["application/vnd.oci.image.config.v1+json"], actions: ["pull"] },
        },
        { name: "second", url: "http://127.0.0.1:9000/" },
      ],
    });
    expect(warnings.filter((w) => w.startsWith("notifications"))).toEqual(["notifications.endpoints[0].color: unknown key, ignored"]);
  });

  it("no endpoints, no notifier; the section is no longer reported as ignored", () => {
    const { config, warnings } = resolve(`${BASE}notifications:\n  events: { includereferences: false }\n`);
    expect(config.notifications).toBeUndefined();
    expect(warnings.filter((w) => w.startsWith("notifications"))).toEqual([]);
  });

  it.each([
    ["endpoints: {name: x}", "notifications.endpoints: expected a list of endpoints"],
    ["endpoints: [{url: 'http://a/'}]", "notifications.endpoints[0].name"],
    ["endpoints: [{name: 'a b', url: 'http://a/'}]", "notifications.endpoints[0].name"],
    ["endpoints: [{name: a, url: 'ftp://a/'}]", "notifications.endpoints[0].url"],
    ["endpoints: [{name: a, url: 'http://a/'}, {name: a, url: 'http://b/'}]", "used by two endpoints"],
    ["endpoints: [{name: a, url: 'http://a/', timeout: soon}]", "notifications.endpoints[0].timeout"],
    ["endpoints: [{name: a, url: 'http://a/', threshold: 0}]", "notifications.endpoints[0].threshold"],
    ["endpoints: [{name: a, url: 'http://a/', ignore: [pull]}]", "notifications.endpoints[0].ignore"],
    ["endpoints: [{name: a, url: 'http://a/', headers: {'Bad Name': [x]}}]", "notifications.endpoints[0].headers"],
  ])("refuses %s", (section, message) => {
    expect(failure(`${BASE}notifications:\n  ${section}\n`)).toContain(message);
  });
});
