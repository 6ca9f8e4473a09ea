/**
 * The page's writes: each a POST of a form carrying the session's CSRF token,
 * answered by a redirect (303) to the page to show next with a message. The
 * services decide whether the user may; the page only relays their answer.
 *
 * @module
 */
import type { Principal } from "../auth/access.js";
import { deleteTag, usersCall, type UiBackend } from "./backend.js";

/** The outcome of an action: where to go, and what to say there. */
export interface ActionResult {
  /** The page to show next, relative to the UI prefix (e.g. `users`). */
  page: string;
  /** Its query. */
  query?: Record<string, string>;
  /** The message. */
  message: string;
  /** Whether it failed. */
  error: boolean;
}

/** The services' error message, or a generic one. */
function failure(answer: { status: number; json: unknown }, what: string): string {
  const body = answer.json as { errors?: { message?: string; detail?: unknown }[] } | undefined;
  const message = body?.errors?.[0]?.message;
  return `${what} failed (${answer.status}${message ? `: ${message}` : ""})`;
}

/** Run the action at `path` (below the prefix) with the posted `form`. Undefined for an unknown path. */
export async function runAction(backend: UiBackend, principal: Principal, path: string, form: URLSearchParams): Promise<ActionResult | undefined> {
  const field = (name: string) => form.get(name) ?? "";
  const id = Number(field("id"));
  switch (path) {
    case "delete-tag": {
      const name = field("name");
      const tag = field("tag");
      const answer = await deleteTag(backend, principal, name, tag);
      const ok = answer.status === 202;
      return { page: "repository", query: { name }, message: ok ? `Tag ${tag} deleted.` : failure(answer, `Deleting tag ${tag}`), error: !ok };
    }
    case "users/create": {
      const answer = await usersCall(backend, principal, "POST", "", { username: field("username"), email: field("email"), password: field("password") });
      const ok = answer.status === 201;
      return { page: "users", message: ok ? `User ${field("username")} created.` : failure(answer, "Creating the user"), error: !ok };
    }
    case "users/password": {
      const answer = await usersCall(backend, principal, "PUT", `/${id}/password`, { new_password: field("password") });
      const ok = answer.status === 200 || answer.status === 204;
      return { page: "users", message: ok ? "Password reset." : failure(answer, "Resetting the password"), error: !ok };
    }
    case "users/admin": {
      const answer = await usersCall(backend, principal, "PUT", `/${id}/sysadmin`, { sysadmin_flag: field("admin") === "true" });
      const ok = answer.status === 200;
      return { page: "users", message: ok ? "Administrator role changed." : failure(answer, "Changing the administrator role"), error: !ok };
    }
    case "users/delete": {
      const answer = await usersCall(backend, principal, "DELETE", `/${id}`);
      const ok = answer.status === 200 || answer.status === 204;
      return { page: "users", message: ok ? "User deleted." : failure(answer, "Deleting the user"), error: !ok };
    }
    default:
      return undefined;
  }
}
