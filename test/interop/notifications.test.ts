/**
 * Notifications with real programs (issue 18): skopeo pushes, pulls and
 * deletes an image on Distribution 2.8 (`docker-registry`) and on
 * `registry-kit serve`, both started on the same `notifications` config and
 * sending to a node:http receiver on loopback; the two event lists are
 * compared field by field, with `includereferences` (issue 41, item 8: pull
 * events carry `references` as push events do, and the events of the one
 * DELETE share one `request.id`, on both). Then the durable outbox: `registry-kit serve`
 * killed with SIGKILL while its endpoint answers 500 loses no event after a
 * restart.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RegistryEvent } from "../../src/events/index.js";
import { startReceiver, waitFor, type Receiver } from "../events/receiver.js";
import { buildTestImage, type TestImage } from "./helpers/image.js";
import { freePort, tempDir, type Background } from "./helpers/process.js";
import { answers, startOnConfig, writeConfig, type SameConfigServer } from "./helpers/same-config.js";
import { skopeoSandbox } from "./helpers/skopeo.js";

/** The fields both registries fill, as one comparable line. */
function line(e: RegistryEvent): string {
  const t = e.target;
  return [e.action, t.repository, t.mediaType ?? "-", t.digest ?? "-", t.size ?? "-", t.length ?? "-", t.tag ?? "-", t.url ? new URL(t.url).pathname : "-"].join(" ");
}

function config(dir: string, port: number, receiver: Receiver, extra: Record<string, unknown> = {}): string {
  return writeConfig(dir, {
    version: 0.1,
    http: { addr: `127.0.0.1:${port}` },
    storage: { filesystem: { rootdirectory: join(dir, "data") }, delete: { enabled: true } },
    notifications: {
      endpoints: [{ name: "receiver", url: receiver.url, timeout: "2s", threshold: 3, backoff: "200ms", headers: { Authorization: ["Bearer test-token"] } }],
      ...extra,
    },
  });
}

describe("notifications: registry-kit and Distribution 2.8 on one config", () => {
  const work = tempDir("notifications");
  const skopeo = skopeoSandbox();
  const running: Background[] = [];
  const receivers: Receiver[] = [];
  let image: TestImage;
  const seen = new Map<SameConfigServer, RegistryEvent[]>();
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    await Promise.all(receivers.map((r) => r.close()));
    skopeo.remove();
    work.remove();
  });

  for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
    it(`${which}: skopeo push, pull and delete reach a loopback receiver as envelopes`, async () => {
      image ??= buildTestImage(join(work.path, "image"), { layers: 2 });
      const receiver = await startReceiver();
      receivers.push(receiver);
      const port = await freePort();
      const dir = join(work.path, which);
      mkdirSync(dir, { recursive: true });
      running.push(await startOnConfig(which, config(dir, port, receiver, { events: { includereferences: true } }), dir, answers(`http://127.0.0.1:${port}/v2/`)));
      const ref = `docker://127.0.0.1:${port}/demo/app:v1`;
      expect((await skopeo.copy(image.ref, ref)).code).toBe(0);
      expect((await skopeo.copy(ref, `oci:${join(dir, "pulled")}:v1`)).code).toBe(0);
      expect((await skopeo.raw(["delete", "--tls-verify=false", ref])).code).toBe(0);
      await waitFor(() => receiver.events().some((e) => e.action === "delete"), `${which}'s delete event`);
      // Pull events may be buffered a moment longer than the delete.
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.envelopes.every((e) => e.contentType === "application/vnd.docker.distribution.events.v1+json")).toBe(true);
      expect(receiver.envelopes.every((e) => e.headers.authorization === "Bearer test-token")).toBe(true);
      const events = receiver.events();
      for (const e of events) {
        // A UUID: version 4 from Distribution, version 8 (a random prefix per process, then a counter) from registry-kit.
        expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[48][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(Number.isNaN(Date.parse(e.timestamp))).toBe(false);
        expect(e.request?.method).toMatch(/^(GET|HEAD|PUT|DELETE|POST|PATCH)$/);
        expect(e.request?.useragent).toMatch(/skopeo|containers/i);
        expect(e.source?.instanceID).toMatch(/\S/);
      }
      seen.set(which, events);
    });
  }

  it("both send the same push, pull and delete events (same action, repository, media type, digest, size, tag, URL path)", () => {
    const distribution = seen.get("distribution")!.map(line);
    const registryKit = seen.get("registry-kit")!.map(line);
    const pushes = [...image.blobDigests, image.manifestDigest];
    for (const digest of pushes) expect(registryKit.filter((l) => l.startsWith("push ") && l.includes(digest))).toHaveLength(1);
    expect([...registryKit].sort()).toEqual([...distribution].sort());
  });

  it("with includereferences both send the manifest's references on its pull as on its push, and one request.id for the delete events of one DELETE", () => {
    const references = (which: SameConfigServer, action: string): unknown[] =>
      seen.get(which)!.filter((e) => e.action === action && e.target.digest === image.manifestDigest).map((e) => e.target.references);
    const pushed = references("distribution", "push");
    expect(pushed).toHaveLength(1);
    expect(pushed[0]).toHaveLength(image.blobDigests.length);
    for (const which of ["distribution", "registry-kit"] as SameConfigServer[]) {
      expect(references(which, "push")).toEqual(pushed);
      const pulls = references(which, "pull");
      expect(pulls.length).toBeGreaterThan(0);
      for (const pull of pulls) expect(pull).toEqual(pushed[0]);
      const deletes = seen.get(which)!.filter((e) => e.action === "delete");
      expect(deletes.length, which).toBeGreaterThan(1);
      expect(new Set(deletes.map((e) => e.request?.id)).size, which).toBe(1);
    }
  });

  it("registry-kit serve killed with SIGKILL while its endpoint answers 500 delivers every push event after a restart", async () => {
    image ??= buildTestImage(join(work.path, "image"), { layers: 2 });
    const receiver = await startReceiver();
    receivers.push(receiver);
    receiver.answer = 500;
    const port = await freePort();
    const dir = join(work.path, "crash");
    mkdirSync(dir, { recursive: true });
    const file = config(dir, port, receiver);
    const first = await startOnConfig("registry-kit", file, dir, answers(`http://127.0.0.1:${port}/v2/`));
    running.push(first);
    expect((await skopeo.copy(image.ref, `docker://127.0.0.1:${port}/crash/app:v1`)).code).toBe(0);
    await waitFor(() => receiver.attempts >= 2, "failed deliveries before the kill");
    // The whole process group: the watchdog shell and the server.
    process.kill(-first.child.pid!, "SIGKILL");
    await waitFor(() => first.exited(), "the killed server to exit");
    expect(receiver.events()).toEqual([]);
    receiver.answer = 200;
    running.push(await startOnConfig("registry-kit", file, dir, answers(`http://127.0.0.1:${port}/v2/`)));
    const pushes = [...image.blobDigests, image.manifestDigest];
    await waitFor(() => receiver.events().length >= pushes.length, "the pending events after the restart");
    await new Promise((r) => setTimeout(r, 1000));
    const events = receiver.events();
    expect(events.map((e) => e.action)).toEqual(pushes.map(() => "push"));
    expect(events.map((e) => e.target.digest).sort()).toEqual([...pushes].sort());
    expect(events.at(-1)!.target.digest).toBe(image.manifestDigest);
    expect(new Set(events.map((e) => e.id)).size).toBe(pushes.length);
    // The restarted process's events have ids of their own: none repeats one of the killed process's.
    expect((await skopeo.copy(image.ref, `docker://127.0.0.1:${port}/crash/app:v2`)).code).toBe(0);
    await waitFor(() => receiver.events().some((e) => e.action === "push" && e.target.tag === "v2"), "the restarted server's push of v2");
    const ids = receiver.events().map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const prefixes = (of: RegistryEvent[]): Set<string> => new Set(of.map((e) => e.id.slice(0, 24)));
    const restarted = receiver.events().slice(events.length);
    expect(prefixes(events).size).toBe(1);
    expect([...prefixes(restarted)].filter((p) => prefixes(events).has(p))).toEqual([]);
  });
});
