/**
 * Issue 41, item 7, with a real client: an in-process `onEvent` sink that
 * takes 2 s per event made every manifest GET take 2 s and a skopeo push 16 s,
 * because the registry awaited it. Now sinks are fed off the request path:
 * skopeo pushes and pulls at its usual speed, and the sink still gets every
 * event, in order, once it catches up.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { EventSink, RegistryEvent } from "../../src/events/index.js";
import { buildTestImage } from "./helpers/image.js";
import { describeRun, tempDir } from "./helpers/process.js";
import { startRegistryKit, type RegistryKit } from "./helpers/registry-kit.js";
import { skopeoSandbox } from "./helpers/skopeo.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe("a slow in-process event sink does not slow skopeo", () => {
  const work = tempDir("event-sink");
  const skopeo = skopeoSandbox();
  let reg: RegistryKit | undefined;
  afterAll(async () => {
    await reg?.close();
    skopeo.remove();
    work.remove();
  });

  it("a sink taking 2 s per event: skopeo push and pull take their usual time, manifest GETs well under 2 s; the sink gets every event in order", async () => {
    const received: RegistryEvent[] = [];
    let slow = true;
    let busy = false;
    let overlapped = false;
    const sink: EventSink = {
      async record(event) {
        overlapped ||= busy;
        busy = true;
        if (slow) await sleep(2000);
        received.push(event);
        busy = false;
      },
    };
    reg = await startRegistryKit({ onEvent: sink });
    const image = buildTestImage(join(work.path, "image"), { layers: 2 });
    const ref = `docker://${reg.host}/slow/app:v1`;

    let started = performance.now();
    const push = await skopeo.copy(image.ref, ref);
    const pushMs = performance.now() - started;
    expect(push.code, describeRun(push)).toBe(0);
    // Eight events (per blob upload.started and push, repository.created, the manifest's push): 16 s when awaited.
    expect(pushMs).toBeLessThan(6000);

    for (let i = 0; i < 3; i++) {
      started = performance.now();
      const get = await fetch(`${reg.url}/v2/slow/app/manifests/v1`, { headers: { Accept: image.mediaType } });
      expect(get.status).toBe(200);
      await get.arrayBuffer();
      expect(performance.now() - started).toBeLessThan(500);
    }
    started = performance.now();
    const pull = await skopeo.copy(ref, `oci:${join(work.path, "pulled")}:v1`);
    expect(pull.code, describeRun(pull)).toBe(0);
    expect(performance.now() - started).toBeLessThan(6000);
    // The sink is still at the start of the push's events.
    expect(received.length).toBeLessThan(3);

    slow = false;
    const pushes = [...image.blobDigests, image.manifestDigest];
    for (let i = 0; i < 1000 && !received.some((e) => e.action === "pull" && e.target.digest === image.blobDigests.at(-1)); i++) await sleep(10);
    await sleep(100);
    expect(overlapped).toBe(false);
    const actions = received.map((e) => `${e.action}${e.target.digest ? ` ${e.target.digest}` : ""}`);
    // In the order they happened (skopeo pushes the blobs in parallel, so their order is its own): the manifest's
    // push after every blob's, every push before the first pull, timestamps never going back.
    const pushed = actions.filter((a) => a.startsWith("push ")).map((a) => a.slice(5));
    expect([...pushed].sort()).toEqual([...pushes].sort());
    expect(pushed.at(-1)).toBe(image.manifestDigest);
    const lastPush = actions.lastIndexOf(`push ${image.manifestDigest}`);
    const firstPull = actions.findIndex((a) => a.startsWith("pull "));
    expect(lastPush).toBeLessThan(firstPull);
    expect(actions.filter((a) => a === `pull ${image.manifestDigest}`).length).toBeGreaterThanOrEqual(4);
    const times = received.map((e) => Date.parse(e.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  }, 120_000);
});
