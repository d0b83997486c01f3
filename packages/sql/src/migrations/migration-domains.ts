import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 007: sending domains and their DKIM keys. A domain is unique per project; its keys are rows of their own
 * (unique per domain and selector), so that each key's rotation step is one compare-and-set. The due index
 * serves the scheduled checks' claims. Private keys are stored only sealed (`sealed_private_key`).
 */
export function domainsSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_domains')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('domain', t.ref, (c) => c.notNull())
            .addColumn('state', t.short, (c) => c.notNull())
            .addColumn('return_path', t.ref)
            .addColumn('return_path_mx', t.ref)
            .addColumn('dmarc_reports', t.address)
            .addColumn('findings', t.json)
            .addColumn('checked_at', t.big)
            .addColumn('next_check_at', t.big, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull())
            .addUniqueConstraint('mailroom_domains_project_domain', ['project_id', 'domain']),
        )
        .execute();
      await s
        .createIndex('mailroom_domains_due')
        .on('mailroom_domains')
        .columns(['next_check_at', 'id'])
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_dkim_keys')
            .addColumn('domain_id', t.id, (c) => c.notNull())
            .addColumn('selector', t.ref, (c) => c.notNull())
            .addColumn('algorithm', t.short, (c) => c.notNull())
            .addColumn('public_key', t.text, (c) => c.notNull())
            .addColumn('sealed_private_key', t.text)
            .addColumn('state', t.short, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('activated_at', t.big)
            .addColumn('retire_at', t.big)
            .addPrimaryKeyConstraint('mailroom_dkim_keys_pk', ['domain_id', 'selector']),
        )
        .execute();
    },
  };
}
