import { MailroomError } from '../base/errors.js';

/**
 * Wraps a Liquid (or any) failure in a `MailroomError`, naming the part that failed. liquidjs messages
 * already end with `, line:N, col:M`, and name the missing variable for strict variables
 * (`undefined variable: firstName`), so they are kept as they are.
 */
export function liquidFailure(
  code: 'TEMPLATE_INVALID' | 'RENDER_FAILED',
  part: string,
  error: unknown,
): MailroomError {
  if (error instanceof MailroomError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new MailroomError(code, `${part}: ${message}`, { cause: error });
}
