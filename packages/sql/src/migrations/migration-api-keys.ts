import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import type { ColumnTypes } from '../dialects/column-types.js';

/**
 * 010: project secrets become API keys (`ApiKeyRecord`): an id, a scope, the sender domains they may send
 * from, a displayable prefix, and the times of last use, revocation and expiry (a rotation's grace) with the
 * key that replaced them. Secrets written before are `full` keys with no domain limit, each given an id made
 * from its digest and the prefix its mode announces (the rest of the secret was never stored).
 */
export function apiKeys(t: ColumnTypes): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      const table = 'mailroom_project_secrets';
      // One column per statement: SQLite alters one at a time.
      await s.alterTable(table).addColumn('id', t.id).execute();
      await s
        .alterTable(table)
        .addColumn('scope', t.short, (c) => c.notNull().defaultTo('full'))
        .execute();
      await s.alterTable(table).addColumn('domains', t.json).execute();
      await s.alterTable(table).addColumn('prefix', t.short).execute();
      await s.alterTable(table).addColumn('last_used_at', t.big).execute();
      await s.alterTable(table).addColumn('revoked_at', t.big).execute();
      await s.alterTable(table).addColumn('expires_at', t.big).execute();
      await s.alterTable(table).addColumn('replaced_by', t.id).execute();
      // A few rows per project: one statement each is simpler than a dialect's string functions.
      const rows = await sql<{
        hash: string;
        mode: string;
      }>`select hash, mode from mailroom_project_secrets`.execute(db);
      for (const row of rows.rows) {
        await sql`update mailroom_project_secrets set id = ${`key_${row.hash.slice(0, 24)}`}, prefix = ${`sk_${row.mode}_`} where hash = ${row.hash}`.execute(
          db,
        );
      }
      await s.createIndex('mailroom_project_secrets_id').on(table).column('id').unique().execute();
    },
  };
}
