/**
 * Early writeback of appended bytes.
 *
 * Appends are not fsynced one by one (the `move` that publishes an upload
 * does it), so a chunked upload would leave the whole object for that last
 * fsync to flush while the client waits. Instead, every {@link EARLY_SYNC}
 * bytes appended to a file start a background fdatasync of it, not awaited by
 * the append: the writeback overlaps the next chunks. Durability never depends
 * on it; the move's fsync still runs.
 *
 * @module
 */
import path from "node:path";
import { syncFile } from "./files.js";

/** With fsync on, start the disk writeback of a large body every this many bytes (see writeBody and {@link AppendWriteback}). */
export const EARLY_SYNC = 64 * 1024 * 1024;

/** Per-file count of the bytes appended since the last early sync; one driver holds one. */
export class AppendWriteback {
  /** Bytes appended to each file since its last early sync started. */
  readonly #sinceSync = new Map<string, number>();
  /** Files with an early sync running (one at a time per file). */
  readonly #syncing = new Set<string>();
  readonly #sync: boolean;

  /** @param sync - the driver's `fsync` option; with it off, nothing is ever synced early. */
  constructor(sync: boolean) {
    this.#sync = sync;
  }

  /** Count `bytes` just appended to `file`; start a background fdatasync once EARLY_SYNC have piled up. */
  afterAppend(file: string, bytes: number): void {
    if (!this.#sync) return;
    const total = (this.#sinceSync.get(file) ?? 0) + bytes;
    if (total < EARLY_SYNC || this.#syncing.has(file)) {
      this.#sinceSync.set(file, total);
      return;
    }
    this.#sinceSync.set(file, 0);
    this.#syncing.add(file);
    // Best effort: the file may be moved or deleted meanwhile, and durability never depends on it.
    void syncFile(file, true)
      .catch(() => {})
      .finally(() => this.#syncing.delete(file));
  }

  /** Drop the count of `file` (moved, deleted, or fully synced by its append). */
  forget(file: string): void {
    this.#sinceSync.delete(file);
  }

  /** Drop the counts of every file under the directory `dir` (a deleted prefix). */
  forgetUnder(dir: string): void {
    for (const file of this.#sinceSync.keys()) if (file.startsWith(dir + path.sep)) this.forget(file);
  }
}
