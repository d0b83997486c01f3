import type { Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/column-types.js';

/**
 * 018: API keys get a name (`ApiKeyRecord.name`: what the key is for, `CI`, `marketing site`), shown in
 * lists. Keys written before have none (null).
 */
export function keyNames(t: ColumnTypes): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('mailroom_project_secrets').addColumn('name', t.text).execute();
    },
  };
}
