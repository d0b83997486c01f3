import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 022: the preference centre and erasure's memory (issue 38). `mailroom_project_brands` (a project's colour
 * and inline logo for the pages its contacts see) and `mailroom_erased_addresses` (the `sha256:` hash of
 * each erased address, read per claim so that an erased address is never mailed again by mistake).
 */
export function preferencesSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_project_brands')
            .addColumn('project_id', t.id, (c) => c.primaryKey())
            .addColumn('color', t.short)
            .addColumn('logo', t.text)
            .addColumn('updated_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_erased_addresses')
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('hashed', t.ref, (c) => c.notNull())
            .addColumn('erased_at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_erased_addresses_pk', ['project_id', 'hashed']),
        )
        .execute();
    },
  };
}
