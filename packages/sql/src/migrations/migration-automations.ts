import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 024: automations (issue 39). `mailroom_workflows` (the current version's trigger, found by event),
 * `mailroom_workflow_versions` (never changed once written), `mailroom_automation_events` (one per project
 * and id: a repeat is a no-op) and `mailroom_automation_runs`, claimed with leases like deliveries; their
 * unique (workflow, contact, entry key) is the re-entry rule.
 */
export function automationsSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_workflows')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('name', t.text, (c) => c.notNull())
            .addColumn('status', t.short, (c) => c.notNull())
            .addColumn('version', t.int, (c) => c.notNull())
            .addColumn('trigger_event', t.ref, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_workflows_trigger')
        .on('mailroom_workflows')
        .columns(['project_id', 'trigger_event'])
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_workflow_versions')
            .addColumn('workflow_id', t.id, (c) => c.notNull())
            .addColumn('version', t.int, (c) => c.notNull())
            .addColumn('definition', t.json, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_workflow_versions_pk', ['workflow_id', 'version']),
        )
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_automation_events')
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('id', t.ref, (c) => c.notNull())
            .addColumn('name', t.id, (c) => c.notNull())
            .addColumn('contact', t.address, (c) => c.notNull())
            .addColumn('properties', t.json, (c) => c.notNull())
            .addColumn('at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_automation_events_pk', ['project_id', 'id']),
        )
        .execute();
      // A run reads its contact's events by name from a time.
      await s
        .createIndex('mailroom_automation_events_contact')
        .on('mailroom_automation_events')
        .columns(['project_id', 'contact', 'name', 'at'])
        .execute();
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_automation_runs')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('workflow_id', t.id, (c) => c.notNull())
            .addColumn('version', t.int, (c) => c.notNull())
            .addColumn('contact', t.address, (c) => c.notNull())
            .addColumn('trigger_event_id', t.ref, (c) => c.notNull())
            .addColumn('entry_key', t.ref, (c) => c.notNull())
            .addColumn('mode', t.short, (c) => c.notNull())
            .addColumn('status', t.short, (c) => c.notNull())
            .addColumn('step', t.id)
            .addColumn('step_started_at', t.big, (c) => c.notNull())
            .addColumn('due_at', t.big)
            .addColumn('timer_at', t.big)
            .addColumn('listens', t.text, (c) => c.notNull())
            .addColumn('data', t.json, (c) => c.notNull())
            .addColumn('sent', t.json, (c) => c.notNull())
            .addColumn('end_reason', t.text)
            .addColumn('started_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull())
            .addColumn('ended_at', t.big)
            .addColumn('lease_expires_at', t.big, (c) => c.notNull().defaultTo(0))
            .addColumn('lease_token', t.big, (c) => c.notNull().defaultTo(0))
            .addColumn('wake_seq', t.big, (c) => c.notNull().defaultTo(0)),
        )
        .execute();
      // The re-entry rule (see `RunRecord.entryKey`).
      await s
        .createIndex('mailroom_automation_runs_entry')
        .on('mailroom_automation_runs')
        .columns(['workflow_id', 'contact', 'entry_key'])
        .unique()
        .execute();
      // Claims walk the due runs in order.
      await s
        .createIndex('mailroom_automation_runs_due')
        .on('mailroom_automation_runs')
        .columns(['status', 'due_at', 'id'])
        .execute();
      // Wakes find a contact's active runs.
      await s
        .createIndex('mailroom_automation_runs_contact')
        .on('mailroom_automation_runs')
        .columns(['project_id', 'contact', 'status'])
        .execute();
      await s
        .createIndex('mailroom_automation_runs_workflow')
        .on('mailroom_automation_runs')
        .columns(['workflow_id', 'started_at', 'id'])
        .execute();
    },
  };
}
