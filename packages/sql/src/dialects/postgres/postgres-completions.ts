import type { Codec } from '../../codec.js';
import type { Db } from '../../connect.js';
import type { OutcomeItem } from '../../outcome-rows.js';
import { OUTCOME_FIELDS, outcomeRow, outcomeSet } from '../../outcome-rows.js';
import type { SqlRunner } from '../../sql-runner.js';

/**
 * One statement for the whole group, over one array per field; `RETURNING` names the fences that held.
 * The fence is written as a `CASE` so that the planner cannot use `status = 'sending'` to pick an index
 * (with stale statistics it scans every open delivery that way); it looks each delivery up by id.
 */
export async function writePostgres(
  db: Db,
  runner: SqlRunner,
  codec: Codec,
  group: readonly OutcomeItem[],
): Promise<boolean[]> {
  const columns: unknown[][] = Array.from({ length: 10 }, () => []);
  for (const item of group) {
    outcomeRow(codec, item).forEach((value, i) => {
      columns[i]?.push(value);
    });
  }
  const text = `UPDATE mailroom_deliveries AS d SET ${outcomeSet('::jsonb')}
    FROM unnest(?::text[], ?::bigint[], ?::text[], ?::bigint[], ?::integer[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[])
      AS v(${OUTCOME_FIELDS})
    WHERE d.id = v.id AND CASE WHEN d.status = 'sending' THEN d.lease_token END = v.lease_token
    RETURNING d.id`;
  const { rows } = await runner.run<{ id: string }>(db, text, columns, true);
  const written = new Set(rows.map((r) => r.id));
  return group.map((item) => written.has(item.id));
}
