/**
 * What the request tests share (request-robustness.test.ts, and the speed bounds in
 * parse-speed.exclusive.test.ts, which run alone): a valid send request, and a check that a parse either
 * passes or is refused with VALIDATION_FAILED and well-formed issues, and nothing else.
 */
import { expect } from 'vitest';
import { MailroomError } from '../src/base/errors.js';

/** A send request that passes validation, for tests to change one field of. */
export const validSend = {
  subject: 'Hi',
  sender: { address: 'news@example.com' },
  message: 'Hello',
  recipients: [{ address: 'ann@example.com', variables: { a: 1 } }],
};

/** Runs `run`; it may return, or throw a VALIDATION_FAILED MailroomError, and nothing else. */
export function onlyValidationErrors(run: () => unknown): 'ok' | 'refused' {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (!(error instanceof MailroomError) || error.code !== 'VALIDATION_FAILED') throw error;
    expect(error.issues?.length).toBeGreaterThan(0);
    for (const issue of error.issues ?? []) {
      expect(typeof issue.code).toBe('string');
      expect(typeof issue.message).toBe('string');
      expect(Array.isArray(issue.path)).toBe(true);
    }
    return 'refused';
  }
}
