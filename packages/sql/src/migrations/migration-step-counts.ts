import { type Kysely, type Migration, sql } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 032: a workflow's runs per step (issue 39): `mailroom_automation_step_counts`, counters of the runs
 * that entered, passed and exited each step, added to in the same transaction as each run's move
 * (`AutomationStore.countSteps`), so that the counts read a few rows whatever the number of runs. A
 * counter is split into `slot`s (from the run's id) so that concurrent workers seldom write the same
 * row. Runs active before this migration count as entered at the step they are at (their history is
 * not known).
 */
export function stepCountsSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await dialect
        .tableOptions(
          db.schema
            .createTable('mailroom_automation_step_counts')
            .addColumn('workflow_id', t.id, (c) => c.notNull())
            .addColumn('step', t.id, (c) => c.notNull())
            .addColumn('slot', t.int, (c) => c.notNull())
            .addColumn('entered', t.big, (c) => c.notNull())
            .addColumn('passed', t.big, (c) => c.notNull())
            .addColumn('exited', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_automation_step_counts_pk', ['workflow_id', 'step', 'slot']),
        )
        .execute();
      await sql`INSERT INTO mailroom_automation_step_counts (workflow_id, step, slot, entered, passed, exited)
        SELECT workflow_id, step, 0, COUNT(*), 0, 0 FROM mailroom_automation_runs
        WHERE status = 'active' AND step IS NOT NULL GROUP BY workflow_id, step`.execute(db);
    },
  };
}
