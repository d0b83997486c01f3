import type { WebhookAttemptRecord, WebhookOutcome } from '@mailroom/core';

/** One webhook attempt's outcome to record, fenced by the lease it was sent under. */
export interface WebhookCompletion {
  id: string;
  leaseToken: number;
  outcome: WebhookOutcome;
  attempt: WebhookAttemptRecord | null;
}

/** The `SET` list of a recorded outcome; its values are {@link webhookSetValues}. */
export const WEBHOOK_SET = `status = ?, lease_expires_at = NULL,
  next_attempt_at = COALESCE(?, next_attempt_at), last_status_code = ?, last_error = ?, updated_at = ?`;
/** The lease fence of a recorded outcome: values id, then token. */
export const WEBHOOK_FENCE = `id = ? AND lease_token = ? AND status = 'sending'`;

/** The values of {@link WEBHOOK_SET}, in order. */
export function webhookSetValues({ outcome }: WebhookCompletion): unknown[] {
  const next = outcome.status === 'pending' ? (outcome.nextAttemptAt ?? outcome.now).getTime() : null;
  return [outcome.status, next, outcome.statusCode, outcome.error, outcome.now.getTime()];
}
