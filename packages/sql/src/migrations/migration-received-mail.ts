import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 029: received mail kept (issue 40). A received message gets whose mail it is (`from_address`, for
 * erasure) and when the retention sweep deletes it (`expires_at`); its raw bytes are kept in pieces of at
 * most a MiB (`mailroom_received_raw`: under MySQL's default packet cap, and no row holds 25 MB), and a
 * project's receiving settings in `mailroom_receiving_settings`.
 */
export function receivedMailSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await s
        .alterTable('mailroom_received_messages')
        .addColumn('from_address', t.address, (c) => c.notNull().defaultTo(''))
        .execute();
      await s.alterTable('mailroom_received_messages').addColumn('expires_at', t.big).execute();
      await s
        .createIndex('mailroom_received_messages_expiry')
        .on('mailroom_received_messages')
        .column('expires_at')
        .execute();
      await s
        .createIndex('mailroom_received_messages_from')
        .on('mailroom_received_messages')
        .columns(['project_id', 'from_address'])
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_received_raw')
            .addColumn('message_id', t.id, (c) => c.notNull())
            .addColumn('seq', t.int, (c) => c.notNull())
            .addColumn('bytes', t.bytes, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_received_raw_pk', ['message_id', 'seq']),
        )
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_receiving_settings')
            .addColumn('project_id', t.id, (c) => c.primaryKey())
            .addColumn('retention_days', t.int)
            .addColumn('max_message_bytes', t.big)
            .addColumn('reply_domain', t.ref)
            .addColumn('updated_at', t.big, (c) => c.notNull()),
        )
        .execute();
    },
  };
}
