import type { z } from 'zod';
import type { ValidationIssue } from '../base/errors.js';
import { MailroomError } from '../base/errors.js';

/**
 * zod's issues become `MailroomError` issues unchanged (`{ code, path, message }`), with one
 * exception: a failed union is replaced by the issues of the one branch whose shape the input has.
 * The schemas' unions are all split by JSON type (string, object, array), so "recipients[3].address:
 * Must contain an @" can be said instead of "recipients: Invalid input".
 */

/** zod's issue type. */
type ZodIssue = z.core.$ZodIssue;

/** Converts zod's issues to validation issues, resolving unions to the branch the input matched. */
export function toValidationIssues(issues: readonly ZodIssue[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of issues) flatten(issue, [], out);
  return out;
}

/** The `VALIDATION_FAILED` error for `issues`; its message names the first issue's path and rule. */
export function validationError(issues: ValidationIssue[], cause?: unknown): MailroomError {
  const first = issues[0];
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  const summary = first
    ? `${formatPath(first.path)}: ${first.message}${more}`
    : 'The request body is invalid';
  return new MailroomError('VALIDATION_FAILED', `Invalid request: ${summary}`, { issues, cause });
}

/** `['recipients', 3, 'address']` -> `recipients[3].address`; the empty path is `body`. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  if (path.length === 0) return 'body';
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out.length === 0 ? key : `.${key}`;
  }
  return out;
}

function flatten(issue: ZodIssue, prefix: ReadonlyArray<string | number>, out: ValidationIssue[]): void {
  const path = [...prefix, ...issue.path.map(pathKey)];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const matching = issue.errors.filter((branch) => branch.length > 0 && !rejectsShape(branch));
    const only = matching.length === 1 ? matching[0] : undefined;
    if (only) {
      for (const inner of only) flatten(inner, path, out);
      return;
    }
  }
  out.push({ code: issue.code, path, message: issue.message });
}

// A branch rejects the input's shape when it failed on the type of the value itself (path []),
// directly or through a nested union all of whose branches did.
function rejectsShape(branch: readonly ZodIssue[]): boolean {
  return branch.some(
    (issue) =>
      issue.path.length === 0 &&
      (issue.code === 'invalid_type' ||
        (issue.code === 'invalid_union' && issue.errors.length > 0 && issue.errors.every(rejectsShape))),
  );
}

function pathKey(key: PropertyKey): string | number {
  return typeof key === 'symbol' ? String(key) : key;
}
