/**
 * The page's writes: each a POST of a form carrying the session's CSRF token,
 * answered by a redirect (303) to the page to show next with a fixed notice
 * code (notices.ts) and, after a refusal, the service's status. The services
 * decide whether the user may; the page only relays their answer.
 *
 * @module
 */
import type { Principal } from "../auth/access.js";
import { deleteTag, usersCall, type JsonAnswer, type UiBackend } from "./backend.js";
import type { NoticeCode } from "./notices.js";

/** The outcome of an action: where to go, and what to say there. */
export interface ActionResult {
  /** The page to show next, relative to the UI prefix (e.g. `users`). */
  page: string;
  /** Its query. */
  query?: Record<string, string>;
  /** The notice to show there. */
  notice: NoticeCode;
  /** The service's status, when it refused. */
  status?: number;
}

/** The outcome of a call that succeeded when `ok`: `done`, or `failed` with the service's status. */
function outcome(answer: JsonAnswer<unknown>, ok: boolean, page: string, done: NoticeCode, failed: NoticeCode): ActionResult {
  return ok ? { page, notice: done } : { page, notice: failed, status: answer.status };
}

/** Run the action at `path` (below the prefix) with the posted `form`. Undefined for an unknown path. */
export async function runAction(backend: UiBackend, principal: Principal, path: string, form: URLSearchParams): Promise<ActionResult | undefined> {
  const field = (name: string) => form.get(name) ?? "";
  const id = Number(field("id"));
  switch (path) {
    case "delete-tag": {
      const name = field("name");
      const answer = await deleteTag(backend, principal, name, field("tag"));
      return { ...outcome(answer, answer.status === 202, "repository", "tag-deleted", "tag-delete-failed"), query: { name } };
    }
    case "users/create": {
      const answer = await usersCall(backend, principal, "POST", "", { username: field("username"), email: field("email"), password: field("password") });
      return outcome(answer, answer.status === 201, "users", "user-created", "user-create-failed");
    }
    case "users/password": {
      const answer = await usersCall(backend, principal, "PUT", `/${id}/password`, { new_password: field("password") });
      return outcome(answer, answer.status === 200 || answer.status === 204, "users", "password-reset", "password-reset-failed");
    }
    case "users/admin": {
      const answer = await usersCall(backend, principal, "PUT", `/${id}/sysadmin`, { sysadmin_flag: field("admin") === "true" });
      return outcome(answer, answer.status === 200, "users", "admin-changed", "admin-change-failed");
    }
    case "users/delete": {
      const answer = await usersCall(backend, principal, "DELETE", `/${id}`);
      return outcome(answer, answer.status === 200 || answer.status === 204, "users", "user-deleted", "user-delete-failed");
    }
    default:
      return undefined;
  }
}
