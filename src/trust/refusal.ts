/**
 * The one error the verifiers throw: a refusal with its reason code, turned
 * into a {@link RefusedSignature} verdict by `verify.ts`.
 *
 * @module
 */
import type { RefusalReason } from "./types.js";

/** A signature refused for `reason`; `message` is the verdict's detail. */
export class Refusal extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = "Refusal";
  }
}

/** Throws a {@link Refusal}. */
export function refuse(reason: RefusalReason, detail: string): never {
  throw new Refusal(reason, detail);
}
