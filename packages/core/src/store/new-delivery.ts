import { newId } from '../base/ids.js';
import { plannedDue } from './delivery-plan.js';
import type { DeliveryRecord, MailingRecord, Variables } from './records.js';

/**
 * One delivery; its Message-ID is fixed now so every attempt carries the same one. Due at `notBefore`, or,
 * for a mailing with a delivery plan (local time, sending window), at the recipient's own time after it.
 */
export function newDelivery(
  mailing: MailingRecord,
  batchId: string,
  r: { address: string; name: string; variables?: Variables; traits?: Variables },
  notBefore: Date,
  senderDomain: string,
  now: Date,
  id: string = newId('dlv', now.getTime()),
): DeliveryRecord {
  const sandbox = mailing.sandbox;
  return {
    id,
    projectId: mailing.projectId,
    mailingId: mailing.id,
    batchId,
    address: r.address,
    name: r.name,
    variables: r.variables ?? {},
    traits: r.traits ?? {},
    status: sandbox ? 'skipped' : 'queued',
    attempts: 0,
    nextAttemptAt: mailing.content.plan ? plannedDue(mailing.content.plan, notBefore, r) : notBefore,
    leaseExpiresAt: null,
    leaseToken: 0,
    messageId: `<${id}@${senderDomain}>`,
    lastResponse: null,
    lastError: sandbox ? 'sandbox secret: recorded, not delivered' : null,
    sentAt: null,
    content: null,
    createdAt: now,
    updatedAt: now,
    // A single message's recipient is claimed before any broadcast's (`DeliveryRecord.priority`).
    ...(mailing.kind === 'message' ? { priority: 0 as const } : {}),
  };
}
