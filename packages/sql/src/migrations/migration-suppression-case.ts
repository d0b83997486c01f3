import { foldAddress } from '@mailroom/core';
import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

interface SuppressionRow {
  project_id: string;
  address: string;
  reason: string;
  detail: string | null;
  created_at: number | string;
}

/**
 * 021: suppressions are stored folded (`foldAddress`: ASCII letters lower-cased, local part included), so
 * that `SUPPA@x.test` and `suppa@x.test` match the suppression of `suppA@x.test`. Rows written before keep
 * the case they were given: each one with an upper-case ASCII letter is rewritten folded, and when a case
 * variant is already stored folded, the stored one is kept (its reason came first). `lower()` differs
 * between databases beyond ASCII, so it only finds the candidates; the fold itself is the core's.
 */
export function suppressionCase(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const { rows } = await sql<SuppressionRow>`
        SELECT project_id, address, reason, detail, created_at FROM mailroom_suppressions
        WHERE address <> lower(address)`.execute(db);
      for (const row of rows) {
        const folded = foldAddress(row.address);
        if (folded === row.address) continue;
        const { rows: taken } = await sql`
          SELECT 1 AS one FROM mailroom_suppressions
          WHERE project_id = ${row.project_id} AND address = ${folded}`.execute(db);
        if (taken.length === 0) {
          await sql`
            INSERT INTO mailroom_suppressions (project_id, address, reason, detail, created_at)
            VALUES (${row.project_id}, ${folded}, ${row.reason}, ${row.detail}, ${row.created_at})`.execute(
            db,
          );
        }
        await sql`
          DELETE FROM mailroom_suppressions
          WHERE project_id = ${row.project_id} AND address = ${row.address}`.execute(db);
      }
    },
  };
}
