import { MailroomError } from '@mailroom/core';

/** A string member of the body: undefined when absent (unless `required`), `VALIDATION_FAILED` otherwise. */
export function stringField(
  body: Record<string, unknown>,
  field: string,
  required = false,
): string | undefined {
  const value = body[field];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string') {
    const message = required ? `\`${field}\` is required: a string` : `\`${field}\` must be a string`;
    throw new MailroomError('VALIDATION_FAILED', message, {
      issues: [{ code: 'invalid_type', path: [field], message }],
    });
  }
  return value;
}
