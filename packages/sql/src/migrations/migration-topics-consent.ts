import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 020: topics and consent (issue 38). `mailroom_mailings.topic`; `mailroom_topics` (one per project and key), `mailroom_topic_states`
 * (a contact's explicit choice per topic; none means the topic's default), and `mailroom_consent_records`
 * (the append-only history, read per contact in time order).
 */
export function topicsConsentSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      // The topic a mailing is sent to (`MailingOptions.topic`), null for most.
      await s.alterTable('mailroom_mailings').addColumn('topic', t.id).execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_topics')
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('topic_key', t.id, (c) => c.notNull())
            .addColumn('name', t.text, (c) => c.notNull())
            .addColumn('description', t.text)
            .addColumn('default_state', t.short, (c) => c.notNull())
            .addColumn('visibility', t.short, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_topics_pk', ['project_id', 'topic_key']),
        )
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_topic_states')
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('address', t.address, (c) => c.notNull())
            .addColumn('topic_key', t.id, (c) => c.notNull())
            .addColumn('state', t.short, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_topic_states_pk', ['project_id', 'address', 'topic_key']),
        )
        .execute();
      // Removing a topic removes its states: found by topic, not by address.
      await s
        .createIndex('mailroom_topic_states_topic')
        .on('mailroom_topic_states')
        .columns(['project_id', 'topic_key'])
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_consent_records')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('address', t.address, (c) => c.notNull())
            .addColumn('at', t.big, (c) => c.notNull())
            .addColumn('change_kind', t.short, (c) => c.notNull())
            .addColumn('topic_key', t.id)
            .addColumn('state', t.short)
            .addColumn('source', t.ref, (c) => c.notNull())
            .addColumn('ip', t.ref)
            .addColumn('user_agent', t.text)
            .addColumn('mailing_ref', t.ref),
        )
        .execute();
      await s
        .createIndex('mailroom_consent_records_contact')
        .on('mailroom_consent_records')
        .columns(['project_id', 'address', 'at', 'id'])
        .execute();
    },
  };
}
