/**
 * Validation of user fields. Each check returns the value to store or throws a
 * 400 {@link UserApiError} naming the field.
 *
 * User names: 2 to 64 characters; lower-case letters, digits and the
 * separators `.`, `_`, `__`, `-` between them, exactly as one path component
 * of a Distribution repository name (`[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*`),
 * so that `<username>/<image>` is a valid namespace. Upper-case letters are
 * accepted and folded to lower case.
 *
 * @module
 */
import { fail } from "./errors.js";
import { MAX_PASSWORD_LENGTH } from "./password.js";

/** A Distribution repository path component. */
export const USERNAME_PATTERN = /^[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*$/;
/** Shortest and longest user name. */
export const USERNAME_LENGTH = {
  /** Shortest user name. */
  min: 2,
  /** Longest user name. */
  max: 64,
} as const;

const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const EMAIL_DOMAIN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The password rules; every field has a default (see {@link DEFAULT_PASSWORD_POLICY}). */
export interface PasswordPolicy {
  /** Shortest password, in characters. */
  minLength: number;
  /** Longest password, in characters (never above 128). */
  maxLength: number;
  /** Needs an upper-case letter. */
  requireUpper: boolean;
  /** Needs a lower-case letter. */
  requireLower: boolean;
  /** Needs a digit. */
  requireDigit: boolean;
}

/** 8 to 128 characters with an upper-case letter, a lower-case letter and a digit. */
export const DEFAULT_PASSWORD_POLICY: Readonly<PasswordPolicy> = Object.freeze({
  minLength: 8,
  maxLength: MAX_PASSWORD_LENGTH,
  requireUpper: true,
  requireLower: true,
  requireDigit: true,
});

/** Complete a partial policy; `maxLength` is capped at 128. */
export function passwordPolicy(policy: Partial<PasswordPolicy> = {}): PasswordPolicy {
  const full = { ...DEFAULT_PASSWORD_POLICY, ...policy };
  full.maxLength = Math.min(full.maxLength, MAX_PASSWORD_LENGTH);
  if (!(full.minLength >= 1 && full.minLength <= full.maxLength)) throw new RangeError("password policy lengths out of range");
  return full;
}

/** A string field of a request body, or a 400. */
export function requireString(value: unknown, field: string): string {
  if (typeof value !== "string") throw fail.badRequest(`${field} must be a string`, field);
  return value;
}

/** Check a user name; returns it folded to lower case. */
export function validateUsername(value: unknown, field = "username"): string {
  const name = requireString(value, field).toLowerCase();
  if (name.length < USERNAME_LENGTH.min || name.length > USERNAME_LENGTH.max) {
    throw fail.badRequest(`${field} must be ${USERNAME_LENGTH.min} to ${USERNAME_LENGTH.max} characters`, field);
  }
  if (!USERNAME_PATTERN.test(name)) {
    throw fail.badRequest(`${field} may hold only a-z, 0-9 and the separators . _ __ - between them`, field);
  }
  return name;
}

/** Check an e-mail address (RFC 5322 dot-atom local part, DNS host name). */
export function validateEmail(value: unknown, field = "email"): string {
  const email = requireString(value, field);
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (email.length > 254 || at < 1 || local.length > 64 || !EMAIL_LOCAL.test(local) || !EMAIL_DOMAIN.test(domain)) {
    throw fail.badRequest(`${field} is not a valid e-mail address`, field);
  }
  return email;
}

/** Check a free-text field: at most `max` characters, no control characters. */
export function validateText(value: unknown, field: string, max: number): string {
  const text = requireString(value, field);
  if ([...text].length > max) throw fail.badRequest(`${field} must be at most ${max} characters`, field);
  if (CONTROL.test(text)) throw fail.badRequest(`${field} must not hold control characters`, field);
  return text;
}

/** Longest real name and comment. */
export const TEXT_LIMITS = { realname: 255, comment: 1024 } as const;

/** Check a new password against a policy. The message never holds the password. */
export function validatePassword(value: unknown, policy: PasswordPolicy, field = "password"): string {
  const password = requireString(value, field);
  const length = [...password].length;
  if (length < policy.minLength || length > policy.maxLength) {
    throw fail.badRequest(`${field} must be ${policy.minLength} to ${policy.maxLength} characters`, field);
  }
  const wants: string[] = [];
  if (policy.requireUpper && !/\p{Lu}/u.test(password)) wants.push("an upper-case letter");
  if (policy.requireLower && !/\p{Ll}/u.test(password)) wants.push("a lower-case letter");
  if (policy.requireDigit && !/[0-9]/.test(password)) wants.push("a digit");
  if (wants.length > 0) throw fail.badRequest(`${field} needs ${wants.join(", ")}`, field);
  return password;
}

/** Check a boolean field. */
export function requireBoolean(value: unknown, field: string): boolean {
  if (typeof value !== "boolean") throw fail.badRequest(`${field} must be true or false`, field);
  return value;
}
