/**
 * The S3 driver's buffer budget (issue 47): part buffers shared by every write
 * and append of a driver, capped, and reused from one writer to the next.
 */
import { describe, expect, it } from "vitest";
import { PieceReader } from "../../src/storage/s3/body.js";
import { BufferBudget } from "../../src/storage/s3/budget.js";

const stream = (bytes: number): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(controller) {
      controller.enqueue(new Uint8Array(bytes).fill(1));
      controller.close();
    },
  });

describe("BufferBudget with PieceReader", () => {
  it("gives a writer's buffers to the next one (a chunked push makes a writer per PATCH)", async () => {
    const budget = new BufferBudget(2);
    const first = new PieceReader(stream(8), 8, undefined, 3, budget);
    const piece = (await first.next())!;
    const buffer = piece.chunks[0]!.buffer;
    piece.release();
    first.dispose();
    const second = new PieceReader(stream(8), 8, undefined, 3, budget);
    expect((await second.next())!.chunks[0]!.buffer).toBe(buffer);
  });

  it("lets no writer hold more than the budget, and every writer its first buffer", async () => {
    const budget = new BufferBudget(2);
    const a = new PieceReader(stream(32), 8, undefined, 3, budget);
    const one = (await a.next())!;
    const two = (await a.next())!;
    // The budget is spent: a's third piece waits for one of its own buffers.
    let third: unknown;
    const pending = a.next().then((p) => (third = p));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(third).toBeUndefined();
    // Another writer waits for its first buffer until one is given back.
    const b = new PieceReader(stream(8), 8, undefined, 3, budget);
    let bFirst: unknown;
    const bPending = b.next().then((p) => (bFirst = p));
    one.release();
    await pending;
    expect(third).toBeDefined();
    expect(bFirst).toBeUndefined();
    two.release();
    (third as { release(): void }).release();
    a.dispose();
    await bPending;
    expect(bFirst).toBeDefined();
  });
});
