import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 023: public signups and double opt-in (issue 38). `mailroom_topics.double_opt_in` and
 * `mailroom_groups.double_opt_in`; the wording a consent
 * record was given under (`mailroom_consent_records.wording`); `mailroom_signup_forms` (one per ref, found
 * by it alone from the public endpoint) and `mailroom_signups` (one per project, form and address).
 */
export function signupFormsSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await s
        .alterTable('mailroom_topics')
        .addColumn('double_opt_in', t.int, (c) => c.notNull().defaultTo(0))
        .execute();
      await s
        .alterTable('mailroom_groups')
        .addColumn('double_opt_in', t.int, (c) => c.notNull().defaultTo(0))
        .execute();
      await s.alterTable('mailroom_consent_records').addColumn('wording', t.text).execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_signup_forms')
            .addColumn('ref', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('name', t.text, (c) => c.notNull())
            .addColumn('group_ref', t.ref)
            .addColumn('topic_key', t.id)
            .addColumn('allowed_origins', t.json, (c) => c.notNull())
            .addColumn('consent_texts', t.json, (c) => c.notNull())
            .addColumn('sender', t.address, (c) => c.notNull())
            .addColumn('confirm_template_ref', t.ref)
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_signup_forms_project')
        .on('mailroom_signup_forms')
        .columns(['project_id', 'ref'])
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_signups')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('form_ref', t.id, (c) => c.notNull())
            .addColumn('address', t.address, (c) => c.notNull())
            .addColumn('consent_version', t.int, (c) => c.notNull())
            .addColumn('status', t.short, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('sent_at', t.big)
            .addColumn('confirmed_at', t.big)
            .addUniqueConstraint('mailroom_signups_form_address', ['project_id', 'form_ref', 'address']),
        )
        .execute();
    },
  };
}
