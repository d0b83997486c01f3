import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 025: receiving mail for the app (issue 40). Routes are unique by (domain, pattern) across projects (one
 * address, one owner) and read by domain at every RCPT; received messages are listed by project, newest
 * first, by their time-ordered id.
 */
export function receivingSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_receiving_routes')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('domain', t.ref, (c) => c.notNull())
            .addColumn('pattern', t.ref, (c) => c.notNull())
            .addColumn('destination', t.json, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addUniqueConstraint('mailroom_receiving_routes_address', ['domain', 'pattern']),
        )
        .execute();
      await s
        .createIndex('mailroom_receiving_routes_project')
        .on('mailroom_receiving_routes')
        .column('project_id')
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_received_messages')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('route_id', t.id, (c) => c.notNull())
            .addColumn('envelope_from', t.address, (c) => c.notNull())
            .addColumn('envelope_to', t.json, (c) => c.notNull())
            .addColumn('remote_address', t.ref, (c) => c.notNull())
            .addColumn('message', t.json, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_received_messages_project')
        .on('mailroom_received_messages')
        .columns(['project_id', 'id'])
        .execute();
    },
  };
}
