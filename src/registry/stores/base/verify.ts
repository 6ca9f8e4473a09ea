/**
 * Integrity verification: every stored blob (`blobs/<alg>/<2 hex>/<hex>/data`,
 * sha256 and sha512, manifests included) is streamed through the hasher and
 * compared with the digest it is stored under. A mismatch is reported and,
 * with `quarantine`, moved under `quarantine/` where no route reads, so the
 * registry answers `BLOB_UNKNOWN` for it and a client's re-push repairs it.
 * See docs/verify.md.
 *
 * Safe while the registry serves:
 * - Only committed blob data is read. Uploads in progress live under
 *   `repositories/<name>/_uploads/` and reach `blobs/` by one atomic move
 *   after their digest was checked, so a reader sees a whole blob or none.
 * - A blob that vanishes between listing, hashing and quarantine (GC removed
 *   it) is counted as `vanished`, not as an error.
 * - A re-push can replace corrupt bytes between their hashing and the move to
 *   quarantine. The moved bytes are therefore hashed again, and put back when
 *   they verify: only bytes known to be wrong stay in quarantine.
 *
 * @module
 */
import { silent, type LogHook } from "../../../http/log.js";
import { checked as checkedDriver, StorageError, type StorageDriver } from "../../../storage/driver.js";
import { tryParseDigest, type Digest, type DigestAlgorithm } from "../../../oci/digest.js";
import { createHasher } from "../../../oci/hash.js";
import { blobData, parseKey, quarantineData, quarantineInfo, type QuarantineInfo } from "./layout.js";

export type { QuarantineInfo };
import { writeJson } from "./storage-io.js";

/** Options of {@link verifyBlobs}. */
export interface VerifyOptions {
  /** Move each blob whose bytes do not match its digest under `quarantine/`, so it is no longer served. Default false. */
  quarantine?: boolean;
  /** Report only: nothing is moved even with `quarantine`. Default false. */
  dryRun?: boolean;
  /** Blobs hashed at once (1 to 256). Default 2: hashing is CPU work on the thread that also serves requests. */
  concurrency?: number;
  /** Stops the run: blobs being hashed are abandoned, the report says where to resume ({@link VerifyReport.resumeAfter}). */
  signal?: AbortSignal;
  /** Resume: start with the first blob after this digest (blobs are verified in storage key order). */
  after?: string;
  /** Receives one event per mismatch, quarantine and read error, and a summary. */
  log?: LogHook;
  /** Called after each blob (in completion order, which is key order when `concurrency` is 1). */
  onProgress?: (progress: VerifyProgress) => void;
  /** The clock that stamps quarantined copies (tests). Default `() => new Date()`. */
  now?: () => Date;
}

/** What {@link VerifyOptions.onProgress} is told after each blob. */
export interface VerifyProgress {
  /** The blob just handled. */
  digest: string;
  /** `ok`: it verified; `mismatch`: its bytes hash to another digest; `vanished`: deleted meanwhile; `error`: it could not be read. */
  outcome: "ok" | "mismatch" | "vanished" | "error";
  /** Blobs hashed so far. */
  checked: number;
  /** Bytes hashed so far. */
  bytes: number;
}

/** A blob whose bytes do not hash to its name. */
export interface VerifyMismatch {
  /** The digest the blob is stored (and served) under. */
  digest: string;
  /** The digest of its bytes. */
  actualDigest: string;
  /** Its size in bytes. */
  size: number;
  /** Where its bytes are now, when they were quarantined: `quarantine/<alg>/<hex>/<stamp>/data`. */
  quarantinedAs?: string;
}

/** A blob that could not be verified. */
export interface VerifyError {
  /** The blob's digest. */
  digest: string;
  /** Why it could not be verified (`quarantine: …` when only the move failed). */
  message: string;
}

/** What {@link verifyBlobs} found. */
export interface VerifyReport {
  /** True when nothing was moved, only reported. */
  dryRun: boolean;
  /** Whether mismatching blobs were (or, in a dry run, would be) quarantined. */
  quarantine: boolean;
  /** Blobs hashed to the end (good and mismatching). */
  checked: number;
  /** Bytes hashed. */
  bytes: number;
  /** Blobs whose bytes do not match their digest, in key order. */
  mismatches: VerifyMismatch[];
  /** How many of the mismatches were moved under `quarantine/`. */
  quarantined: number;
  /** Blobs listed but deleted before they could be verified or quarantined (GC ran meanwhile). */
  vanished: number;
  /** Blobs that could not be read (or moved), in key order. */
  errors: VerifyError[];
  /** True when the signal stopped the run before every blob was verified. */
  aborted: boolean;
  /** When aborted: pass as {@link VerifyOptions.after} to go on; every blob up to it was handled. */
  resumeAfter?: string;
}

const DEFAULT_CONCURRENCY = 2;
const MAX_CONCURRENCY = 256;
const PAGE_SIZE = 1000;

/**
 * Re-hash every stored blob and report (optionally quarantine) those whose
 * bytes do not match their digest. Works on any driver, through the
 * {@link StorageDriver} interface only; streams each blob, so memory stays
 * flat however large the blobs. Throws only for invalid options; storage
 * failures of single blobs are reported in {@link VerifyReport.errors}, a
 * failing listing rejects.
 *
 * @example
 * ```ts
 * const report = await verifyBlobs(storage, { quarantine: true });
 * for (const m of report.mismatches) console.log(`${m.digest} hashes to ${m.actualDigest}`);
 * ```
 */
export async function verifyBlobs(driver: StorageDriver, options: VerifyOptions = {}): Promise<VerifyReport> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
    throw new RangeError(`concurrency must be an integer from 1 to ${MAX_CONCURRENCY}, got ${concurrency}`);
  }
  const after = options.after === undefined ? undefined : tryParseDigest(options.after);
  if (options.after !== undefined && !after) {
    throw new RangeError(`after must be a digest such as "sha256:<64 hex digits>", got ${JSON.stringify(String(options.after).slice(0, 200))}`);
  }
  const run: Run = {
    storage: checkedDriver(driver),
    options,
    log: options.log ?? silent,
    report: {
      dryRun: options.dryRun ?? false, quarantine: options.quarantine ?? false,
      checked: 0, bytes: 0, mismatches: [], quarantined: 0, vanished: 0, errors: [], aborted: false,
    },
  };
  const signal = options.signal;

  // Blobs are handled in key order with `concurrency` in flight; `window`
  // holds the started ones not yet known done, so the resume point is the
  // last blob before the first unfinished one.
  const window: { digest: string; done: boolean }[] = [];
  const running = new Set<Promise<void>>();
  let resumePoint = after?.value;
  for await (const digest of blobDigests(run.storage, after, signal)) {
    if (signal?.aborted) break;
    const slot = { digest: digest.value, done: false };
    window.push(slot);
    const task: Promise<void> = verifyOne(run, digest).then((finished) => {
      slot.done = finished;
      while (window[0]?.done) resumePoint = window.shift()!.digest;
    }).finally(() => running.delete(task));
    running.add(task);
    while (running.size >= concurrency) await Promise.race(running);
  }
  await Promise.all(running);

  const { report } = run;
  report.aborted = signal?.aborted ?? false;
  if (report.aborted && resumePoint !== undefined) report.resumeAfter = resumePoint;
  const byDigest = (a: { digest: string }, b: { digest: string }) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0);
  report.mismatches.sort(byDigest);
  report.errors.sort(byDigest);
  run.log({
    level: "info",
    msg: report.aborted ? "verify stopped" : "verify done",
    checked: report.checked, bytes: report.bytes, mismatches: report.mismatches.length, quarantined: report.quarantined,
    vanished: report.vanished, errors: report.errors.length,
    ...(report.resumeAfter !== undefined ? { resumeAfter: report.resumeAfter } : {}),
  });
  return report;
}

interface Run {
  storage: StorageDriver;
  options: VerifyOptions;
  log: LogHook;
  report: VerifyReport;
}

/** Verify (and quarantine) one blob. Resolves to false when the signal stopped it, true when it was handled. */
async function verifyOne(run: Run, digest: Digest): Promise<boolean> {
  const { storage, options, report } = run;
  const key = blobData(digest);
  const progress = (outcome: VerifyProgress["outcome"]) =>
    options.onProgress?.({ digest: digest.value, outcome, checked: report.checked, bytes: report.bytes });
  const failed = (error: unknown, doing: string) => {
    const message = error instanceof Error ? error.message : String(error);
    report.errors.push({ digest: digest.value, message: doing ? `${doing}: ${message}` : message });
    run.log({ level: "error", msg: `verify could not ${doing || "read"} a blob`, digest: digest.value, error: message });
    progress("error");
  };

  const vanished = () => {
    report.vanished++;
    progress("vanished");
  };
  const verified = (size: number) => {
    report.checked++;
    report.bytes += size;
  };

  let hashed: Hashed | undefined;
  try {
    hashed = await hashObject(storage, key, digest.algorithm, options.signal);
  } catch (error) {
    if (options.signal?.aborted) return false;
    if (!isNotFound(error)) {
      failed(error, "");
      return true;
    }
  }
  if (!hashed) {
    vanished();
    return true;
  }
  if (hashed.digest === digest.value) {
    verified(hashed.size);
    progress("ok");
    return true;
  }

  let mismatch: VerifyMismatch = { digest: digest.value, actualDigest: hashed.digest, size: hashed.size };
  let quarantineError: unknown;
  if (report.quarantine && !report.dryRun) {
    try {
      const outcome = await quarantineBlob(run, digest, hashed);
      if (outcome === "vanished") {
        vanished();
        return true;
      }
      if (outcome === "repaired") {
        verified(hashed.size);
        run.log({ level: "info", msg: "verify saw a corrupt blob replaced by a re-push while it ran; the new bytes verify", digest: digest.value });
        progress("ok");
        return true;
      }
      mismatch = outcome;
    } catch (error) {
      quarantineError = error;
    }
  }
  verified(hashed.size);
  report.mismatches.push(mismatch);
  run.log({ level: "error", msg: "verify found a blob whose bytes do not match its digest", digest: digest.value, actualDigest: mismatch.actualDigest, size: mismatch.size });
  if (mismatch.quarantinedAs !== undefined) {
    report.quarantined++;
    run.log({ level: "warn", msg: "verify quarantined a corrupt blob", digest: digest.value, key: mismatch.quarantinedAs });
  }
  if (quarantineError !== undefined) failed(quarantineError, "quarantine");
  else progress("mismatch");
  return true;
}

/**
 * Move a mismatching blob under `quarantine/`, then hash what was moved: a
 * re-push may have replaced the bytes since they were hashed. Good bytes go
 * back (replacing whatever another re-push put there: the same bytes).
 */
async function quarantineBlob(run: Run, digest: Digest, hashed: Hashed): Promise<VerifyMismatch | "vanished" | "repaired"> {
  const { storage } = run;
  const key = blobData(digest);
  const at = (run.options.now ?? (() => new Date()))();
  // Compact UTC time (sorts, and is a valid file name everywhere) + randomness, so two runs never share a folder.
  const stamp = `${at.toISOString().replace(/[-:]/g, "")}-${crypto.randomUUID().slice(0, 8)}`;
  const target = quarantineData(digest, stamp);
  try {
    await storage.move(key, target);
  } catch (error) {
    if (isNotFound(error)) return "vanished";
    throw error;
  }
  let moved: Hashed;
  try {
    // Not abortable: a stop must not leave bytes in quarantine that were never found wrong.
    moved = (await hashObject(storage, target, digest.algorithm, undefined)) ?? hashed;
    if (moved.digest === digest.value) {
      await storage.move(target, key);
      return "repaired";
    }
  } catch (error) {
    // Say where the bytes are: the operator may have to move them back.
    throw new Error(`the bytes were moved to ${target} and then: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const info: QuarantineInfo = { digest: digest.value, actualDigest: moved.digest, size: moved.size, from: key, quarantinedAt: at.toISOString() };
  // The bytes are already out of reach; a missing note is worth a warning, not a failure.
  const note = quarantineInfo(digest, stamp);
  await writeJson(storage, note, info).catch((error: unknown) =>
    run.log({ level: "warn", msg: "verify could not write a quarantine note", key: note, error: String(error) }));
  return { digest: digest.value, actualDigest: moved.digest, size: moved.size, quarantinedAs: target };
}

interface Hashed {
  digest: string;
  size: number;
}

/** Stream `key` through a hasher; `undefined` when it does not exist. Rejects (an AbortError) when `signal` fires. */
async function hashObject(storage: StorageDriver, key: string, algorithm: DigestAlgorithm, signal: AbortSignal | undefined): Promise<Hashed | undefined> {
  signal?.throwIfAborted();
  const stream = await storage.read(key);
  if (!stream) return undefined;
  const reader = stream.getReader();
  // Cancelling ends a pending read with `done`, which must not pass for the end of the blob: checked below.
  const cancel = () => void reader.cancel(signal?.reason).catch(() => {});
  signal?.addEventListener("abort", cancel, { once: true });
  const hasher = createHasher(algorithm);
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) break;
      hasher.update(value);
      size += value.byteLength;
    }
  } catch (error) {
    await reader.cancel(error).catch(() => {});
    throw error;
  } finally {
    signal?.removeEventListener("abort", cancel);
    reader.releaseLock();
  }
  return { digest: hasher.digest(), size };
}

/** The digests of the blob data keys under `blobs/`, in key order, after `after`. Other keys are skipped. */
async function* blobDigests(storage: StorageDriver, after: Digest | undefined, signal: AbortSignal | undefined): AsyncGenerator<Digest> {
  let start = after && blobData(after);
  for (;;) {
    if (signal?.aborted) return;
    const page = await storage.list("blobs", start === undefined ? { limit: PAGE_SIZE } : { after: start, limit: PAGE_SIZE });
    for (const key of page.keys) {
      const parsed = parseKey(key);
      if (parsed.kind === "blobData") yield parsed.digest;
    }
    const last = page.keys[page.keys.length - 1];
    if (!page.truncated || last === undefined) return;
    start = last;
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof StorageError && error.code === "not_found";
}
