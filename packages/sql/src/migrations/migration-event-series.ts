import type { Kysely, Migration } from 'kysely';

/**
 * 017: events by project and time, for the activity charts (`ActivityStore.countEventSeries`). The
 * primary order of events is their id; a chart asks for a time range, which without this index is a scan
 * of the project's events. `created_at` grows with inserts, so the index is appended to at its end.
 */
export function eventSeries(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('mailroom_events_time')
        .on('mailroom_events')
        .columns(['project_id', 'created_at'])
        .execute();
    },
  };
}
