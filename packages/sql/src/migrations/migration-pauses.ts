import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 013: pauses (`PauseRecord`): at most one per (project, scope, target), the primary key. The table stays
 * small (the pauses in force, and expired ones until replaced or resumed): a claim reads it whole.
 */
export function pausesSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect
        .tableOptions(
          db.schema
            .createTable('mailroom_pauses')
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('scope', t.short, (c) => c.notNull())
            .addColumn('target', t.ref, (c) => c.notNull())
            .addColumn('domains', t.json, (c) => c.notNull())
            .addColumn('paused_by', t.short, (c) => c.notNull())
            .addColumn('reason', t.text)
            .addColumn('rule', t.json)
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('until_at', t.big)
            .addPrimaryKeyConstraint('mailroom_pauses_pk', ['project_id', 'scope', 'target']),
        )
        .execute();
    },
  };
}
