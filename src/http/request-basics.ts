/**
 * A mark for handlers (and authorizers) that read only a request's `method`,
 * `url`, `headers`, `signal` and `body`, and never pass the request itself to
 * `new Request(request)` or `fetch(request)`. The Node adapter gives such
 * handlers a lighter request object for requests without a body (see
 * src/node/request.ts); registry-kit's own handlers carry the mark.
 *
 * @module
 */

const BASICS = Symbol.for("registry-kit.readsRequestBasics");

/** Mark `fn` as reading only the basics of its requests (see the module comment). */
export function readsRequestBasics<T extends object>(fn: T): T {
  Object.defineProperty(fn, BASICS, { value: true });
  return fn;
}

/** Whether `fn` carries the mark of {@link readsRequestBasics}. */
export function onlyReadsRequestBasics(fn: unknown): boolean {
  return typeof fn === "function" && (fn as { [BASICS]?: boolean })[BASICS] === true;
}
