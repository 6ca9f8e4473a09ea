/**
 * Deleting: a blob (breaking its lease first when it has one, so that a cancel
 * wins over an append in progress, whose commit then fails) and every blob
 * under a prefix.
 *
 * @module
 */
import { StorageError } from "../driver.js";
import type { AzureContext } from "./context.js";
import { breakLease } from "./lease.js";
import { listAll } from "./list.js";

/** Deletes sent at once by `deletePrefix`. */
const DELETE_CONCURRENCY = 8;

/** Delete blob `blob`; a missing blob is fine, a leased one has its lease broken first. */
export async function deleteBlob(ctx: AzureContext, blob: string, op: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const response = await ctx.client.send({ op, method: "DELETE", blob, accept: [404, 409, 412] });
    void response.body?.cancel();
    if (response.status < 300 || response.status === 404) return;
    // 412 LeaseIdMissing: an append or move holds it. Break the lease and delete again.
    await breakLease(ctx.client, blob, op);
  }
  throw new StorageError("conflict", `azure ${op} ${JSON.stringify(blob)}: the blob stays leased by another writer`);
}

/** The driver's `delete`. */
export async function deleteObject(ctx: AzureContext, key: string): Promise<void> {
  await deleteBlob(ctx, ctx.names.blob(key), "delete");
}

/** The driver's `deletePrefix`: every blob under `prefix/`, a few at a time. */
export async function deletePrefix(ctx: AzureContext, prefix: string): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  for await (const entry of listAll(ctx, ctx.names.blob(prefix) + "/")) {
    const task: Promise<void> = deleteBlob(ctx, entry.name, "delete")
      .catch((error: unknown) => {
        failure ??= error;
      })
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
    while (inFlight.size >= DELETE_CONCURRENCY) await Promise.race(inFlight);
    if (failure) break;
  }
  await Promise.all(inFlight);
  if (failure) throw failure;
}
