import { newId } from '../base/ids.js';
import type { ConsentRecord } from '../store/consent-records.js';
import type { ConsentStore } from '../store/consent-store.js';
import type { ClaimedDelivery, MailingRecord } from '../store/records.js';

/**
 * The consent records of the broadcast messages a batch sent past consent (`includeUnsubscribed`, an admin
 * act: issue 38): one `sent-unsubscribed` record, source `broadcast`, in the history of each person it
 * reached, written after the batch's outcomes (a crash in between loses the records of that batch, never
 * the send's own record).
 */
export interface PastConsentRecords {
  /** Note a sent broadcast delivery to an unsubscribed profile. */
  add(delivery: ClaimedDelivery, mailing: MailingRecord, at: Date): void;
  /** Write what was noted (one transaction), and forget it. */
  flush(): Promise<void>;
}

/** A collector for one batch. */
export function pastConsentRecords(store: Pick<ConsentStore, 'appendConsentRecords'>): PastConsentRecords {
  let records: ConsentRecord[] = [];
  return {
    add(delivery, mailing, at) {
      records.push({
        id: newId('cns', at.getTime()),
        projectId: delivery.projectId,
        address: delivery.address,
        at,
        change: 'sent-unsubscribed',
        topicKey: mailing.options.topic ?? null,
        state: null,
        source: 'broadcast',
        ip: null,
        userAgent: null,
        mailingRef: mailing.ref,
      });
    },
    async flush() {
      if (records.length === 0) return;
      const writing = records;
      records = [];
      await store.appendConsentRecords(writing);
    },
  };
}
