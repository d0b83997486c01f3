import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 005: open and click tracking. Link maps (one JSON text per mailing), opens (one row per delivery and
 * class, the unique key deciding which open is the first) and clicks (one row each), indexed by mailing
 * for the broadcast's figures and by delivery for its page.
 */
export function trackingSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_tracking_links')
            .addColumn('mailing_id', t.id, (c) => c.primaryKey())
            .addColumn('links', t.text, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_tracking_opens')
            .addColumn('delivery_id', t.id, (c) => c.notNull())
            .addColumn('machine', t.int, (c) => c.notNull())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('mailing_id', t.id, (c) => c.notNull())
            .addColumn('first_at', t.big, (c) => c.notNull())
            .addColumn('last_at', t.big, (c) => c.notNull())
            .addColumn('hits', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_tracking_opens_pk', ['delivery_id', 'machine']),
        )
        .execute();
      await s
        .createIndex('mailroom_tracking_opens_mailing')
        .on('mailroom_tracking_opens')
        .columns(['mailing_id', 'machine'])
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_tracking_clicks')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('mailing_id', t.id, (c) => c.notNull())
            .addColumn('delivery_id', t.id, (c) => c.notNull())
            .addColumn('link_index', t.int, (c) => c.notNull())
            .addColumn('url', t.text, (c) => c.notNull())
            .addColumn('machine', t.int, (c) => c.notNull())
            .addColumn('at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_tracking_clicks_mailing')
        .on('mailroom_tracking_clicks')
        .columns(['mailing_id', 'link_index'])
        .execute();
      await s
        .createIndex('mailroom_tracking_clicks_delivery')
        .on('mailroom_tracking_clicks')
        .columns(['delivery_id', 'at'])
        .execute();
    },
  };
}
