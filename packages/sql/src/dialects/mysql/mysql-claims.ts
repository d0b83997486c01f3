import type { ClaimSpec } from '../../claims/claim-spec.js';
import type { Db } from '../../connection/connect.js';
import type { SqlRunner } from '../../connection/sql-runner.js';
import type { Row } from '../../rows/codec.js';

/**
 * A claim on MySQL/MariaDB: pick the due ids `FOR UPDATE SKIP LOCKED` on the index the spec names, update
 * them, and read them back, in one transaction (no `RETURNING` on MySQL updates).
 */
export async function mysqlClaim<T>(runner: SqlRunner, db: Db, spec: ClaimSpec<T>): Promise<T[]> {
  const { table, due, dueParams, limit, set, setParams, decode } = spec;
  const rows = await runner.transaction(db, async (tx) => {
    const from = spec.mysqlIndex ? `${table} d FORCE INDEX (${spec.mysqlIndex})` : `${table} d`;
    const picked = await runner.run<{ id: string }>(
      tx,
      `SELECT d.id FROM ${from} WHERE ${due} LIMIT ? FOR UPDATE SKIP LOCKED`,
      [...dueParams, limit],
    );
    if (picked.rows.length === 0) return [];
    const ids = picked.rows.map((row) => row.id);
    const list = runner.values(1, ids.length);
    // FORCE INDEX: on a small table the optimizer would rather scan, and an UPDATE's scan briefly
    // locks every row it passes, which concurrent SKIP LOCKED claimers would then skip.
    await runner.run(tx, `UPDATE ${table} FORCE INDEX (PRIMARY) SET ${set} WHERE id IN ${list}`, [
      ...setParams,
      ...ids,
    ]);
    return (await runner.run<Row>(tx, `SELECT * FROM ${table} WHERE id IN ${list}`, ids)).rows;
  });
  return rows.map(decode);
}

/** Extend the leases matching `where` to `until`; returns their ids. */
export function mysqlRenew(
  runner: SqlRunner,
  db: Db,
  where: string,
  params: unknown[],
  until: number,
): Promise<string[]> {
  // No RETURNING on MySQL updates: the rows the update matched stay locked by this transaction,
  // so reading the same condition back returns exactly them.
  return runner.transaction(db, async (tx) => {
    await runner.run(
      tx,
      `UPDATE mailroom_deliveries FORCE INDEX (PRIMARY) SET lease_expires_at = ? WHERE ${where}`,
      [until, ...params],
    );
    const rows = await runner.run<{ id: string }>(
      tx,
      `SELECT id FROM mailroom_deliveries WHERE ${where}`,
      params,
    );
    return rows.rows.map((row) => String(row.id));
  });
}
