import type { Kysely, Migration } from 'kysely';

/**
 * 028: an index of mailings by kind and status, so that a claim finds the open broadcasts (and their
 * projects) without reading every mailing: the fair share of a claim among projects
 * (`DeliveryQueue.claimDeliveries`, `roles/fair-claims.ts`) starts from them. It is on the mailings, a
 * row per message or broadcast, not on the deliveries, whose index writes the hot path pays per attempt.
 */
export function openBroadcasts(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('mailroom_mailings_open')
        .on('mailroom_mailings')
        .columns(['kind', 'status'])
        .execute();
    },
  };
}
