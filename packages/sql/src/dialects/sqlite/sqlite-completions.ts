import type Database from 'better-sqlite3';
import type { SqlClaims } from '../../claims/sql-claims.js';
import type { Db } from '../../connection/connect.js';
import type { SqlRunner } from '../../connection/sql-runner.js';
import type { Codec } from '../../rows/codec.js';
import type { OutcomeItem } from '../../rows/outcome-rows.js';
import { OUTCOME_FIELDS, outcomeRow, outcomeSet } from '../../rows/outcome-rows.js';
import {
  WEBHOOK_FENCE,
  WEBHOOK_SET,
  type WebhookCompletion,
  webhookSetValues,
} from '../../rows/webhook-outcome-rows.js';

/**
 * A SQLite file of the store's own: one prepared fenced update per outcome, run directly, which measured
 * faster than one UPDATE ... FROM over a VALUES list or over json_each of the group (BENCHMARKS.md, "Store").
 * Where the claim left the row's rowid, the update finds the row by it rather than through the id's index
 * (less time per outcome), still fenced by id and token; when that matches nothing (a lost lease, or a row
 * moved since, as by VACUUM), the update by id decides.
 */
export function writeSqliteFile(
  tx: Db,
  runner: SqlRunner,
  claims: SqlClaims,
  group: readonly OutcomeItem[],
): boolean[] {
  const written: boolean[] = [];
  for (const item of group) {
    const rowid = claims.takeRowid(item.id);
    let changes = 0;
    if (rowid !== undefined) {
      const [text, params] = claims.outcome(item.outcome, true);
      params.push(rowid, item.id, item.leaseToken);
      changes = (runner.statement(tx, text) as Database.Statement).run(params).changes;
    }
    if (changes === 0) {
      const [text, params] = claims.outcome(item.outcome);
      params.push(item.id, item.leaseToken);
      changes = (runner.statement(tx, text) as Database.Statement).run(params).changes;
    }
    written.push(changes > 0);
  }
  return written;
}

/** One `UPDATE ... FROM` a `VALUES` list for the whole group; `RETURNING` names the fences that held. */
export async function writeSqlite(
  db: Db,
  runner: SqlRunner,
  codec: Codec,
  group: readonly OutcomeItem[],
): Promise<boolean[]> {
  const written = new Set<string>();
  for (const chunk of runner.chunk(
    group.map((item) => outcomeRow(codec, item)),
    10,
  )) {
    const text = `WITH v(${OUTCOME_FIELDS}) AS (VALUES ${runner.values(chunk.length, 10)})
      UPDATE mailroom_deliveries AS d SET ${outcomeSet('')}
      FROM v WHERE d.id = v.id AND d.lease_token = v.lease_token AND d.status = 'sending'
      RETURNING id`;
    const { rows } = await runner.run<{ id: string }>(db, text, chunk.flat());
    for (const row of rows) written.add(row.id);
  }
  return group.map((item) => written.has(item.id));
}

/**
 * Webhook outcomes on a SQLite file of the store's own: one prepared fenced update per message, run
 * directly, by the rowid its claim found when there is one (as for deliveries above), else by id.
 */
export function writeWebhooksSqliteFile(
  runner: SqlRunner,
  claims: SqlClaims,
  tx: Db,
  items: readonly WebhookCompletion[],
): boolean[] {
  const update = `UPDATE mailroom_webhook_messages SET ${WEBHOOK_SET}`;
  const byRowid = runner.statement(
    tx,
    `${update} WHERE rowid = ? AND ${WEBHOOK_FENCE}`,
  ) as Database.Statement;
  const byId = runner.statement(tx, `${update} WHERE ${WEBHOOK_FENCE}`) as Database.Statement;
  return items.map((item) => {
    const values = webhookSetValues(item);
    const rowid = claims.takeRowid(item.id);
    let changes = rowid === undefined ? 0 : byRowid.run([...values, rowid, item.id, item.leaseToken]).changes;
    if (changes === 0) changes = byId.run([...values, item.id, item.leaseToken]).changes;
    return changes > 0;
  });
}
