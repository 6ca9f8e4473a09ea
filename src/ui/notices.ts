/**
 * The notice box's messages: a redirect after an action carries a fixed code
 * (`msg`) and at most the service's status (`status`, three digits), never
 * text, so that a link made by anyone else cannot put words on the page
 * (issue 41, item 11). An unknown code shows nothing.
 *
 * @module
 */

/** What an action or the sign-out can report. */
export type NoticeCode =
  | "signed-out" | "tag-deleted" | "tag-delete-failed" | "user-created" | "user-create-failed"
  | "password-reset" | "password-reset-failed" | "admin-changed" | "admin-change-failed"
  | "user-deleted" | "user-delete-failed";

const NOTICES: Record<NoticeCode, { text: string; error: boolean }> = {
  "signed-out": { text: "Signed out.", error: false },
  "tag-deleted": { text: "Tag deleted.", error: false },
  "tag-delete-failed": { text: "Deleting the tag failed", error: true },
  "user-created": { text: "User created.", error: false },
  "user-create-failed": { text: "Creating the user failed", error: true },
  "password-reset": { text: "Password reset.", error: false },
  "password-reset-failed": { text: "Resetting the password failed", error: true },
  "admin-changed": { text: "Administrator role changed.", error: false },
  "admin-change-failed": { text: "Changing the administrator role failed", error: true },
  "user-deleted": { text: "User deleted.", error: false },
  "user-delete-failed": { text: "Deleting the user failed", error: true },
};

/** Why a service refused, by its status, in the page's own words. */
const REASONS: Record<number, string> = {
  400: "the values were refused (check the user name, e-mail and password rules)",
  401: "you may not do this",
  403: "you may not do this",
  404: "it does not exist",
  405: "the registry does not allow it now (read-only mode, or deletes are off)",
  409: "it conflicts with an existing user or a policy",
};

/** Whether `code` is one of the {@link NoticeCode}s. */
function isNoticeCode(code: string): code is NoticeCode {
  return Object.prototype.hasOwnProperty.call(NOTICES, code);
}

/** The notice for the `msg` and `status` of a page's query; undefined for an unknown code. */
export function noticeOf(code: string | null, status: string | null): { text: string; error: boolean } | undefined {
  if (code === null || !isNoticeCode(code)) return undefined;
  const notice = NOTICES[code];
  if (!notice.error) return notice;
  const answered = status !== null && /^[1-5]\d\d$/.test(status) ? Number(status) : undefined;
  const reason = answered === undefined ? undefined : (REASONS[answered] ?? `the service answered ${answered}`);
  return { text: `${notice.text}${reason ? `: ${reason}` : ""}.`, error: true };
}
