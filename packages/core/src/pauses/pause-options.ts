import { MailroomError } from '../base/errors.js';
import type { MailingRecord } from '../store/records.js';

/** The longest timed pause of a destination: 30 days, in minutes. */
export const MAX_PAUSE_MINUTES = 43_200;
/** The longest reason kept with a pause. */
export const MAX_PAUSE_REASON = 500;

/** What an operator gives with a pause: why, and (destinations) for how long and over which domains. */
export interface PauseOptions {
  reason?: string;
  domains?: string[];
  minutes?: number;
}

/**
 * Checks an operator's pause options as every caller (API, CLI, dashboard) gives them: a reason of at
 * most 500 characters, whole minutes from 1 to 30 days, at least one domain. `VALIDATION_FAILED` naming
 * the field otherwise.
 */
export function checkPauseOptions(options: PauseOptions): void {
  const { reason, minutes, domains } = options;
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_PAUSE_REASON)) {
    invalid('reason', `\`reason\` must be a string of at most ${MAX_PAUSE_REASON} characters`);
  }
  if (minutes !== undefined && !(Number.isInteger(minutes) && minutes >= 1 && minutes <= MAX_PAUSE_MINUTES)) {
    invalid('minutes', `\`minutes\` must be a whole number from 1 to ${MAX_PAUSE_MINUTES} (30 days)`);
  }
  if (
    domains !== undefined &&
    (!Array.isArray(domains) || domains.length === 0 || domains.some((d) => typeof d !== 'string'))
  ) {
    invalid('domains', '`domains` must be a non-empty list of domain names');
  }
}

/**
 * A broadcast that ended for good (cancelled, or failed) sends nothing more: pausing it is refused with
 * `BROADCAST_CLOSED`. A completed one may still take a batch (see accept-requests.ts), so it may be paused.
 */
export function checkPausable(mailing: MailingRecord): void {
  if (mailing.status === 'cancelled' || mailing.status === 'failed') {
    throw new MailroomError(
      'BROADCAST_CLOSED',
      `Broadcast ${mailing.ref} is ${mailing.status}; there is nothing to pause`,
    );
  }
}

function invalid(field: string, message: string): never {
  throw new MailroomError('VALIDATION_FAILED', message, {
    issues: [{ code: 'invalid_type', path: [field], message }],
  });
}
