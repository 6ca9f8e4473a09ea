/**
 * The state every operation of the Azure Blob driver works over, built once by
 * `azureStorage` from its options. The modules beside this one are functions of it.
 *
 * @module
 */
import type { AzureClient } from "./client.js";
import type { BlobNames } from "./names.js";

/** What one Azure driver instance knows: where its blobs are and how to talk to the service. */
export interface AzureContext {
  /** Signed requests with retries, against the driver's container. */
  readonly client: AzureClient;
  /** Blob names under the driver's `rootDirectory`, and the list markers it remembers. */
  readonly names: BlobNames;
  /** Block size in bytes: a write up to it is one Put Blob, larger ones are staged blocks (also the buffer size). */
  readonly blockSize: number;
  /** Blocks staged in parallel by one write. */
  readonly concurrency: number;
  /** How long a lease (the writer lock) lasts unless renewed, in seconds: what a crashed writer blocks a key for. */
  readonly leaseSeconds: number;
  /** How often a GET body resumes after a failed connection. */
  readonly maxRetries: number;
}
