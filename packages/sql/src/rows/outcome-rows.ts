import type { DeliveryOutcome } from '@mailroom/core';
import type { Codec } from './codec.js';
import { ms } from './codec.js';

/** One outcome to write, fenced by its lease token. */
export interface OutcomeItem {
  id: string;
  leaseToken: number;
  outcome: DeliveryOutcome;
}

/** Whether the outcome gives the claim's attempt back (`DeliveryOutcome.uncounted`): never handed over. */
export function givesAttemptBack(outcome: DeliveryOutcome): boolean {
  return (
    outcome.uncounted === true &&
    (outcome.status === 'queued' || outcome.status === 'suppressed' || outcome.status === 'skipped')
  );
}

/** The fields of one outcome as one row: id, token, status, updated_at, `given` bits, then the values. */
export function outcomeRow(codec: Codec, { id, leaseToken, outcome }: OutcomeItem): unknown[] {
  // Bit i of `given` says whether the outcome sets that field at all (undefined leaves it unchanged).
  const given =
    (outcome.nextAttemptAt !== undefined ? 1 : 0) |
    (outcome.lastResponse !== undefined ? 2 : 0) |
    (outcome.lastError !== undefined ? 4 : 0) |
    (outcome.sentAt !== undefined ? 8 : 0) |
    (outcome.content !== undefined ? 16 : 0) |
    (givesAttemptBack(outcome) ? 64 : 0);
  return [
    id,
    leaseToken,
    outcome.status,
    outcome.now.getTime(),
    given,
    ms(outcome.nextAttemptAt),
    outcome.lastResponse ?? null,
    outcome.lastError ?? null,
    ms(outcome.sentAt),
    codec.json(outcome.content),
  ];
}

export const OUTCOME_FIELDS =
  'id, lease_token, status, updated_at, given, next_attempt_at, last_response, last_error, sent_at, content';

/** The `SET` list applying an outcome row `v` to delivery `d`. */
export function outcomeSet(contentCast: string): string {
  return `status = v.status,
      lease_expires_at = NULL,
      updated_at = v.updated_at,
      attempts = CASE WHEN v.given & 64 <> 0 THEN d.attempts - 1 ELSE d.attempts END,
      next_attempt_at = CASE WHEN v.given & 1 <> 0 THEN v.next_attempt_at ELSE d.next_attempt_at END,
      last_response = CASE WHEN v.given & 2 <> 0 THEN v.last_response ELSE d.last_response END,
      last_error = CASE WHEN v.given & 4 <> 0 THEN v.last_error ELSE d.last_error END,
      sent_at = CASE WHEN v.given & 8 <> 0 THEN v.sent_at ELSE d.sent_at END,
      content = CASE WHEN v.given & 16 <> 0 THEN v.content${contentCast} ELSE d.content END`;
}
