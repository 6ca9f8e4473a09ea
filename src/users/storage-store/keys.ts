/**
 * The key layout of the storage user store (the table in storage-store.ts):
 * records by id, the name and e-mail indexes, the id counter.
 *
 * @module
 */
import { toHex } from "../../util/bytes.js";
import { fold } from "../store.js";

/** The keys of one store, under its prefix. */
export interface UserKeys {
  /** `<prefix>/by-id`: the folder of the records, listed to find every id. */
  readonly records: string;
  /** `<prefix>/next-id`: the next id to assign. */
  readonly nextId: string;
  /** `<prefix>/by-id/<id, 10 digits>.json`: the record. */
  record(id: number): string;
  /** `<prefix>/by-name/<folded name>`: the id owning that user name. */
  name(username: string): string;
  /** `<prefix>/by-email/<folded e-mail>`: the id owning that e-mail. */
  email(email: string): string;
}

const SAFE_KEY_TEXT = /^[a-z0-9._@+=-]+$/;
const RECORD_FILE = /\/([0-9]{10})\.json$/;
const encoder = new TextEncoder();

/** The key layout under `prefix`. */
export function userKeys(prefix: string): UserKeys {
  return {
    records: `${prefix}/by-id`,
    nextId: `${prefix}/next-id`,
    record: (id) => `${prefix}/by-id/${String(id).padStart(10, "0")}.json`,
    name: (username) => `${prefix}/by-name/${keyText(username)}`,
    email: (email) => `${prefix}/by-email/${keyText(email)}`,
  };
}

/** The id a record key names, or `undefined` for any other key. */
export function idOfRecordKey(key: string): number | undefined {
  const match = RECORD_FILE.exec(key);
  return match?.[1] ? Number(match[1]) : undefined;
}

/** Folded text as one key segment: itself when key-safe, else `X` and the hex of its UTF-8 (folded text never holds `X`). */
function keyText(text: string): string {
  const folded = fold(text);
  if (SAFE_KEY_TEXT.test(folded) && folded !== "." && folded !== "..") return folded;
  return "X" + toHex(encoder.encode(folded));
}
