/**
 * `post` (src/events/endpoint.ts) bounds each envelope's POST by the
 * endpoint's timeout with one timer, cleared once the endpoint answers: an
 * answered POST leaves nothing behind to fire later (AbortSignal.timeout
 * did, and made an exception each time).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { DeliveryError, post, resolveEndpoint, type WebhookPost } from "../../src/events/endpoint.js";

const endpoint = resolveEndpoint({ name: "hook", url: "http://receiver.invalid/events", timeout: 250 });
const body = new TextEncoder().encode('{"events":[]}');

describe("post", () => {
  afterEach(() => vi.useRealTimers());

  it("arms one timer while the endpoint has not answered and clears it once it has", async () => {
    vi.useFakeTimers();
    let answer!: (status: number) => void;
    let seen: AbortSignal | undefined;
    const send: WebhookPost = (_url, _headers, _body, signal) => {
      seen = signal;
      return new Promise((resolve) => (answer = resolve));
    };
    const sent = post(endpoint, body, send);
    expect(vi.getTimerCount()).toBe(1);
    answer(202);
    await sent;
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(seen!.aborted).toBe(false);
  });

  it("aborts the POST at the endpoint's timeout and says so", async () => {
    vi.useFakeTimers();
    const send: WebhookPost = (_url, _headers, _body, signal) =>
      new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error)));
    const sent = post(endpoint, body, send);
    const failed = expect(sent).rejects.toThrow(new DeliveryError("endpoint hook: no answer within 250 ms"));
    await vi.advanceTimersByTimeAsync(249);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await failed;
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a refusal before the timeout is the sender's error, not a timeout, and clears the timer", async () => {
    vi.useFakeTimers();
    const send: WebhookPost = () => Promise.reject(new Error("connect ECONNREFUSED"));
    await expect(post(endpoint, body, send)).rejects.toThrow("endpoint hook: connect ECONNREFUSED");
    expect(vi.getTimerCount()).toBe(0);
  });
});
