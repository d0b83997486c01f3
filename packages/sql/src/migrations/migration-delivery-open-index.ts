import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 027, PostgreSQL: one index entry fewer per delivery (issue 42). `mailroom_deliveries_mailing_status`
 * (mailing, status) took a new entry at each of a delivery's three writes (the accept, the claim, the
 * outcome: none of them can be a HOT update, as each changes the status that the due index's condition
 * reads), for reads that ask for a mailing's open deliveries (is one left, settle or reschedule them, the
 * waiting ones by hour) and for the counts by status. It becomes `mailroom_deliveries_mailing_open`, the
 * mailing of open deliveries only (partial): the outcome that settles a delivery writes no entry in it,
 * and it holds the open backlog rather than every delivery ever sent. The counts by status and the other
 * reads by mailing use the unique (mailing, address) key; they read the rows' status from the table, which
 * during a send they did anyway (the visibility map of pages being written is not set, so PostgreSQL's
 * index-only scan fetched the rows too).
 *
 * SQLite and MySQL keep their index: they rewrite an index entry only when its columns change (the same
 * three writes), and there the index covers the counts by status of `GET /broadcasts/:ref` (issue 26),
 * which without it would read every delivery's row.
 */
export function deliveryOpenIndex(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect.kind !== 'postgres') return;
      const s = db.schema;
      await s
        .createIndex('mailroom_deliveries_mailing_open')
        .on('mailroom_deliveries')
        .column('mailing_id')
        .where(sql.ref('status'), 'in', sql`('queued', 'sending')`)
        .execute();
      await dialect.dropIndex(s, 'mailroom_deliveries_mailing_status', 'mailroom_deliveries').execute();
    },
  };
}
