import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 004: inbound signals (bounces, complaints, delivery reports) with the key that makes a repeated one a
 * no-op, and each address's soft bounces in a row. Delivery statuses `bounced` and `complained` need no
 * change: `status` is a short text column.
 */
export function inboundSignalsMigration(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_inbound_signals')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('delivery_id', t.id, (c) => c.notNull())
            .addColumn('address', t.address, (c) => c.notNull())
            .addColumn('kind', t.short, (c) => c.notNull())
            .addColumn('source', t.short, (c) => c.notNull())
            .addColumn('status', t.short)
            .addColumn('diagnostic', t.text)
            .addColumn('dedupe_key', t.ref, (c) => c.notNull().unique())
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_inbound_signals_delivery')
        .on('mailroom_inbound_signals')
        .columns(['delivery_id', 'created_at'])
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_soft_bounces')
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('address', t.address, (c) => c.notNull())
            .addColumn('soft_count', t.int, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_soft_bounces_pk', ['project_id', 'address']),
        )
        .execute();
    },
  };
}
