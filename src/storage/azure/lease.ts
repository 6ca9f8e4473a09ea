/**
 * The writer lock of the Azure driver: a blob lease. "One writer, a final
 * move" (see `StorageDriver` in `../driver.ts`) across every process that
 * shares a container.
 *
 * An `append` to a key and a `move` of it first acquire a lease on the blob and
 * release it when done, failed or not. While it is held, Azure refuses another
 * lease (`409 LeaseAlreadyPresent`: the other append or move fails with
 * `conflict`, or an append without an expected size waits a while), and every
 * write or delete of the blob that does not name the lease. An append stages
 * and commits its blocks under the lease, so a move that took the lease first
 * makes the append's commit fail, and the moved bytes are exactly the ones the
 * move saw.
 *
 * Leases last `leaseSeconds` (default {@link LEASE_SECONDS}) and are renewed every
 * third of that while the operation runs (a body may stream for long): a process that dies holding one blocks the key for
 * at most that long. `delete` breaks a lease before it deletes, so a cancel
 * always wins over an append in progress, whose commit then fails.
 *
 * @module
 */
import { StorageError } from "../driver.js";
import { sleep } from "../s3/client.js";
import type { AzureClient } from "./client.js";

/** A lease's default length: Azure allows 15 to 60 seconds (or infinite). */
export const LEASE_SECONDS = 60;
/** How long an append without an expected size waits for another writer, in ms. */
const WAIT_MS = 10_000;

/** A lease held by this process. */
export interface Lease {
  /** The lease id: writes and deletes of the blob must name it. */
  readonly id: string;
  /** Stop renewing and release the lease (best effort: an unreleased lease expires). */
  release(): Promise<void>;
}

/**
 * Acquire the lease of `blob`. Resolves to `undefined` when there is no such
 * blob; throws `conflict` when another writer holds it (with `wait`, after
 * retrying for up to 10 s).
 */
export async function acquireLease(
  client: AzureClient,
  blob: string,
  op: string,
  options: { wait?: boolean; signal?: AbortSignal | undefined; seconds?: number } = {},
): Promise<Lease | undefined> {
  const seconds = options.seconds ?? LEASE_SECONDS;
  const id = crypto.randomUUID();
  const deadline = Date.now() + WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    if (options.signal?.aborted) throw new StorageError("aborted", `${op} aborted`, { cause: options.signal.reason });
    const response = await client.send({
      op,
      method: "PUT",
      blob,
      query: { comp: "lease" },
      headers: { "x-ms-lease-action": "acquire", "x-ms-lease-duration": String(seconds), "x-ms-proposed-lease-id": id },
      accept: [404, 409],
    });
    void response.body?.cancel();
    if (response.status === 404) return undefined;
    // A retried acquire whose first attempt landed finds its own lease: Azure answers it as a success.
    if (response.status < 300) return held(client, blob, op, id, (seconds * 1000) / 3);
    if (!options.wait || Date.now() >= deadline) {
      throw new StorageError("conflict", `azure ${op}: another append or move of this object is in progress`);
    }
    await sleep(Math.min(1_000, 20 * 2 ** attempt) * (0.5 + Math.random() / 2), options.signal);
  }
}

function held(client: AzureClient, blob: string, op: string, id: string, renewMs: number): Lease {
  const lease = (action: "renew" | "release"): Promise<void> =>
    client.send({ op, method: "PUT", blob, query: { comp: "lease" }, headers: { "x-ms-lease-action": action, "x-ms-lease-id": id }, accept: [404, 409] })
      .then((response) => response.body?.cancel(), () => {});
  const timer = setInterval(() => void lease("renew"), renewMs);
  (timer as { unref?: () => void }).unref?.();
  return {
    id,
    release: async () => {
      clearInterval(timer);
      await lease("release");
    },
  };
}

/** Break any lease on `blob` at once (before a delete: a cancel wins over an append in progress). */
export async function breakLease(client: AzureClient, blob: string, op: string): Promise<void> {
  const response = await client.send({
    op,
    method: "PUT",
    blob,
    query: { comp: "lease" },
    headers: { "x-ms-lease-action": "break", "x-ms-lease-break-period": "0" },
    accept: [404, 409],
  });
  void response.body?.cancel();
}
