/**
 * A tee that reads its source only when every branch still listening wants
 * the next chunk, so at most one chunk is held whatever the speed of either
 * reader. `ReadableStream.prototype.tee` reads as fast as the faster branch
 * and queues everything for the slower one: memory grows with the stream.
 *
 * @module
 */

interface Branch {
  controller?: ReadableStreamDefaultController<Uint8Array>;
  /** Resolves the branch's pending `pull` once it got its chunk. */
  waiting?: () => void;
  cancelled: boolean;
}

/**
 * Split `source` into two streams that see the same chunks, read in
 * lockstep: the source is read once both branches asked (a cancelled branch
 * no longer counts). Cancelling both cancels the source; a source error
 * errors both.
 */
export function lockstepTee(source: ReadableStream<Uint8Array>): [ReadableStream<Uint8Array>, ReadableStream<Uint8Array>] {
  const reader = source.getReader();
  const branches: [Branch, Branch] = [{ cancelled: false }, { cancelled: false }];
  let reading = false;
  let finished = false;

  const live = () => branches.filter((b) => !b.cancelled);
  const step = async (): Promise<void> => {
    const wanted = live();
    if (reading || finished || wanted.length === 0 || wanted.some((b) => !b.waiting)) return;
    reading = true;
    let result: ReadableStreamReadResult<Uint8Array>;
    try {
      result = await reader.read();
    } catch (error) {
      finished = true;
      for (const b of live()) b.controller?.error(error);
      release();
      return;
    } finally {
      reading = false;
    }
    if (result.done) {
      finished = true;
      for (const b of live()) b.controller?.close();
      release();
      return;
    }
    for (const b of live()) b.controller?.enqueue(result.value);
    release();
  };
  const release = () => {
    for (const b of branches) {
      const wake = b.waiting;
      b.waiting = undefined;
      wake?.();
    }
  };

  const make = (branch: Branch) =>
    new ReadableStream<Uint8Array>(
      {
        start(controller) {
          branch.controller = controller;
        },
        pull() {
          return new Promise<void>((resolve) => {
            branch.waiting = resolve;
            void step();
          });
        },
        async cancel(reason) {
          branch.cancelled = true;
          const wake = branch.waiting;
          branch.waiting = undefined;
          wake?.();
          if (live().length === 0 && !finished) {
            finished = true;
            await reader.cancel(reason).catch(() => {});
          } else void step();
        },
      },
      { highWaterMark: 0 },
    );
  return [make(branches[0]), make(branches[1])];
}
