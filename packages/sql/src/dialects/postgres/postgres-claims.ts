import type { ClaimSpec } from '../../claims/claim-spec.js';
import type { Db } from '../../connection/connect.js';
import type { SqlRunner } from '../../connection/sql-runner.js';
import type { Row } from '../../rows/codec.js';

/**
 * Planner settings for one claim (`set_config(..., true)` lasts until the end of the transaction).
 * Without a sort or a bitmap scan, the only way to the `ORDER BY ... LIMIT` is the due index, in order.
 * JIT is off because a disabled path's cost would otherwise make PostgreSQL compile the query.
 */
const PG_INDEX_ORDER =
  "SELECT set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('jit', 'off', true)";

/**
 * Run `text` (an `ORDER BY <due index> LIMIT` read or claim) so that PostgreSQL walks the due index in
 * order.
 */
export async function pgInDueOrder<R>(
  runner: SqlRunner,
  db: Db,
  text: string,
  params: unknown[],
): Promise<R[]> {
  // One round trip where the store can: the settings and the statement as one script, whose
  // implicit transaction bounds the settings as the explicit one below does.
  const script = runner.script<R>([
    [PG_INDEX_ORDER, []],
    [text, params],
  ]);
  if (script) return script;
  return runner.transaction(db, async (tx) => {
    // Until the table has been analyzed (a fresh broadcast of a million rows), the planner takes the
    // due rows for a handful and sorts them all on every claim. Walking the due index in order and
    // stopping at the limit is right at any size, so the transaction asks for it.
    await runner.run(tx, PG_INDEX_ORDER);
    return (await runner.run<R>(tx, text, params)).rows;
  });
}

/**
 * A claim on PostgreSQL: the due rows picked `FOR UPDATE SKIP LOCKED` (concurrent claimers pass over each
 * other's picks) and updated in one statement, walking the due index in order.
 */
export async function pgClaim<T>(runner: SqlRunner, db: Db, spec: ClaimSpec<T>): Promise<T[]> {
  const { table, due, dueParams, limit, set, setParams, decode } = spec;
  const text = `WITH due AS (SELECT d.id FROM ${table} d WHERE ${due} LIMIT ? FOR UPDATE SKIP LOCKED)
      UPDATE ${table} AS u SET ${set} FROM due WHERE u.id = due.id RETURNING u.*`;
  return (await pgInDueOrder<Row>(runner, db, text, [...dueParams, limit, ...setParams])).map(decode);
}
