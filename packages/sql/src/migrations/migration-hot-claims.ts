import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 034, PostgreSQL: the claim of a delivery becomes a HOT update (issue 42), writing no index entry where
 * it wrote four. PostgreSQL can update a row in place on its page (heap-only tuple) only when no index
 * reads a column whose value the update changes, in its key or its condition, and when the page has room.
 * The claim changes `status` (read by the conditions of the due and open-by-mailing indexes) and
 * `updated_at` (the key of the content-retention index). So:
 *
 * - `open_at`, as MySQL has had since 001: a stored generated column, the attempt time of open deliveries
 *   (`queued`, `sending`) and null once settled. The claim leaves it as it was (`queued` to `sending`
 *   keeps the delivery open), the outcome that settles a delivery nulls it.
 * - The due index becomes (priority, open_at) of rows whose `open_at` is set, the open-by-mailing index
 *   (027) the mailing of the same rows: the same entries as before, by a column the claim does not change.
 * - The content-retention index takes `created_at` instead of `updated_at` (always created_at <=
 *   updated_at, so the sweep's `updated_at < ?` is bounded by `created_at < ?` on the index, see
 *   `pruneDeliveryContent`).
 * - `fillfactor = 50`: a claim takes a run of rows written together, so every row of a page is rewritten
 *   in one statement, while the old versions still count; the page needs room for both. The outcome's
 *   update (not HOT: it nulls `open_at`) finds the claim's old versions pruned.
 *
 * Adding a stored column rewrites the table once (an `ACCESS EXCLUSIVE` lock while it does). SQLite and
 * MySQL are left alone: SQLite rewrites an index entry only when its own columns change, and MySQL's
 * indexes already leave `status` and `updated_at` out.
 */
export function hotClaims(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect.kind !== 'postgres') return;
      await sql`ALTER TABLE mailroom_deliveries
        ADD COLUMN open_at bigint GENERATED ALWAYS AS (CASE WHEN status IN ('queued', 'sending') THEN next_attempt_at END) STORED`.execute(
        db,
      );
      await sql`DROP INDEX mailroom_deliveries_due`.execute(db);
      await sql`CREATE INDEX mailroom_deliveries_due ON mailroom_deliveries (priority, open_at) WHERE open_at IS NOT NULL`.execute(
        db,
      );
      await sql`DROP INDEX mailroom_deliveries_mailing_open`.execute(db);
      await sql`CREATE INDEX mailroom_deliveries_mailing_open ON mailroom_deliveries (mailing_id) WHERE open_at IS NOT NULL`.execute(
        db,
      );
      await sql`DROP INDEX mailroom_deliveries_content`.execute(db);
      await sql`CREATE INDEX mailroom_deliveries_content ON mailroom_deliveries (created_at) WHERE content IS NOT NULL`.execute(
        db,
      );
      await sql`ALTER TABLE mailroom_deliveries SET (fillfactor = 50)`.execute(db);
    },
  };
}
