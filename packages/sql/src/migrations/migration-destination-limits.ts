import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 014: the shared send limits (`DestinationLimitStore`). One row per key, the row every taker of the key
 * locks first, so that the takes of a key are serialized across processes; and the key's token buckets,
 * one row per (key, window, bucket start), deleted once they count in no window.
 */
export function destinationLimitsSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_destination_keys')
            .addColumn('dest_key', t.ref, (c) => c.primaryKey())
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_destination_tokens')
            .addColumn('dest_key', t.ref, (c) => c.notNull())
            .addColumn('window_ms', t.big, (c) => c.notNull())
            .addColumn('bucket_start', t.big, (c) => c.notNull())
            .addColumn('tokens', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_destination_tokens_pk', [
              'dest_key',
              'window_ms',
              'bucket_start',
            ]),
        )
        .execute();
    },
  };
}
