/**
 * Which process delivers the outbox, when several share one store: a lease
 * kept in storage with nothing but the driver contract.
 *
 * Epoch `n` is the object `<prefix>/lease/<n>`. A process claims epoch `n`
 * with an append at `expectedSize: 0`: the one-writer rule lets exactly one
 * claimant create it, the others get `conflict`. The holder renews by
 * appending a line (`{"owner","until"}`) at the size it last saw, which only it
 * can do. Another process takes over only after the last `until` has passed
 * (plus a margin for clock skew), by claiming epoch `n + 1`; the old holder
 * sees that object and stops. Two deliverers at once therefore need a holder
 * stalled past its lease: the "abnormal case" that at-least-once delivery
 * and the per-event ids cover.
 *
 * @module
 */
import { StorageError, type StorageDriver } from "../storage/driver.js";
import { readAll } from "../util/streams.js";

/** Settings of a {@link Lease}. */
export interface LeaseOptions {
  /** How long a claim or renewal holds, in milliseconds. */
  durationMs: number;
  /** Tolerated clock difference between processes, in milliseconds. */
  skewMs: number;
}

const EPOCH_DIGITS = 12;
/** Size past which the holder moves its renewals to a new epoch object. */
const ROTATE_BYTES = 16 * 1024;

function epochKey(prefix: string, epoch: number): string {
  return `${prefix}/lease/${String(epoch).padStart(EPOCH_DIGITS, "0")}`;
}

/** A process's view of the lease. */
export class Lease {
  readonly #storage: StorageDriver;
  readonly #prefix: string;
  readonly #owner: string;
  readonly #options: LeaseOptions;
  #epoch = 0;
  #size = 0;
  #until = 0;

  constructor(storage: StorageDriver, prefix: string, owner: string, options: LeaseOptions) {
    this.#storage = storage;
    this.#prefix = prefix;
    this.#owner = owner;
    this.#options = options;
  }

  /** Whether this process holds the lease now (by its own clock). */
  get held(): boolean {
    return this.#epoch > 0 && Date.now() < this.#until;
  }

  /**
   * Hold the lease: renew it when held (or give it up when another process took
   * a newer epoch), else try to claim it. Resolves to whether it is held.
   */
  async acquire(): Promise<boolean> {
    if (this.#epoch > 0) {
      if (await this.#storage.stat(epochKey(this.#prefix, this.#epoch + 1))) {
        this.#epoch = 0;
        return false;
      }
      // Renewed once a third of the lease has passed, not on every call: one small append per few seconds.
      if (this.#until - Date.now() > (this.#options.durationMs * 2) / 3) return true;
      if (this.#size < ROTATE_BYTES) return this.#append(this.#epoch, Date.now() + this.#options.durationMs);
      // Start a fresh object so that readers of the lease never read much.
      const old = this.#epoch;
      this.#size = 0;
      const held = await this.#append(old + 1, Date.now() + this.#options.durationMs);
      if (held) await this.#storage.delete(epochKey(this.#prefix, old)).catch(() => {});
      return held;
    }
    const latest = await this.#latest();
    if (latest && Date.now() <= latest.until + this.#options.skewMs) return false;
    const next = (latest?.epoch ?? 0) + 1;
    this.#size = 0;
    const held = await this.#append(next, Date.now() + this.#options.durationMs);
    if (held && latest) await this.#storage.delete(epochKey(this.#prefix, latest.epoch)).catch(() => {});
    return held;
  }

  /** Give the lease up at once (another process may take it without waiting). */
  async release(): Promise<void> {
    if (this.#epoch === 0) return;
    await this.#append(this.#epoch, 0).catch(() => false);
    this.#epoch = 0;
  }

  async #append(epoch: number, until: number): Promise<boolean> {
    const line = new TextEncoder().encode(`${JSON.stringify({ owner: this.#owner, until })}\n`);
    try {
      this.#size = await this.#storage.append(epochKey(this.#prefix, epoch), line, { expectedSize: this.#size });
    } catch (error) {
      if (error instanceof StorageError && error.code === "conflict") {
        this.#epoch = 0;
        return false;
      }
      throw error;
    }
    this.#epoch = until === 0 ? 0 : epoch;
    this.#until = until;
    return this.#epoch > 0;
  }

  /** The newest epoch and the `until` of its last line; a half-written line counts as just renewed. */
  async #latest(): Promise<{ epoch: number; until: number } | undefined> {
    const page = await this.#storage.list(`${this.#prefix}/lease`);
    const key = page.keys.at(-1);
    if (key === undefined) return undefined;
    const epoch = Number(key.slice(key.lastIndexOf("/") + 1));
    const stream = await this.#storage.read(key);
    if (!stream || !Number.isSafeInteger(epoch)) return { epoch: Number.isSafeInteger(epoch) ? epoch : 0, until: Date.now() };
    const lines = new TextDecoder().decode(await readAll(stream, 1024 * 1024)).split("\n").filter((l) => l !== "");
    try {
      const until = (JSON.parse(lines.at(-1) ?? "") as { until?: unknown }).until;
      return { epoch, until: typeof until === "number" ? until : Date.now() };
    } catch {
      return { epoch, until: Date.now() };
    }
  }
}
