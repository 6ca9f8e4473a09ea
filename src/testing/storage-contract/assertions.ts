/**
 * Comparisons and error checks shared by the contract tests.
 *
 * @module
 */
import { expect } from "vitest";
import { StorageError } from "../../storage/driver.js";

/** Whether `a` holds exactly the bytes of `b` (`undefined` never does). */
export function bytesEqual(a: Uint8Array | undefined, b: Uint8Array): boolean {
  if (!a || a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The `code` of a {@link StorageError}, `undefined` for anything else. */
export function codeOf(error: unknown): string | undefined {
  return error instanceof StorageError ? error.code : undefined;
}

/** Assert that `promise` rejects with a {@link StorageError} of `code`. */
export async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a StorageError "${code}"`).toBeInstanceOf(StorageError);
  expect((error as StorageError).code).toBe(code);
}
