/**
 * The notifier's delivery loop: runs a pass, then the next one at once when
 * the pass sent something, else after a wait the caller computes (the poll
 * interval, or until pulls held in memory are due). A waiting loop can be
 * woken (a full batch of pulls is in memory).
 *
 * @module
 */
import type { LogHook } from "../http/log.js";

/** A pass: resolves to the events it sent. */
export type Pass = () => Promise<number>;

/** Runs delivery passes one after another until stopped (see the module comment). */
export class PassLoop {
  readonly #pass: Pass;
  readonly #idleWait: () => number;
  readonly #log: LogHook;
  #running = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The loop waits in `#timer` for its next pass (it is not running one, nor about to). */
  #idle = false;
  #current: Promise<unknown> = Promise.resolve();

  /** @param idleWait - milliseconds to wait after a pass that sent nothing. */
  constructor(pass: Pass, idleWait: () => number, log: LogHook) {
    this.#pass = pass;
    this.#idleWait = idleWait;
    this.#log = log;
  }

  /** Whether the loop is waiting for its next pass. */
  get idle(): boolean {
    return this.#idle;
  }

  /** Start passes (idempotent). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#run();
  }

  /** Run the next pass now if the loop is waiting. */
  wake(): void {
    if (!this.#idle || this.#timer === undefined) return;
    this.#idle = false;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#run(), 0);
  }

  /** Stop: no pass starts from now on; resolves once the one under way (if any) has ended. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#idle = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#current;
  }

  #run(): void {
    this.#timer = undefined;
    this.#idle = false;
    if (!this.#running) return;
    this.#current = this.#pass()
      .catch((error) => this.#log({ level: "error", msg: "event delivery pass failed", error: String(error) }))
      .then((sent) => {
        if (!this.#running) return;
        const wait = typeof sent === "number" && sent > 0 ? 0 : this.#idleWait();
        this.#idle = wait > 0;
        this.#timer = setTimeout(() => this.#run(), wait);
      });
  }
}
