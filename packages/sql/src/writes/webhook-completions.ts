import type { SqlClaims } from '../claims/sql-claims.js';
import type { Db } from '../connection/connect.js';
import type { SqlRunner } from '../connection/sql-runner.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import {
  WEBHOOK_FENCE,
  WEBHOOK_SET,
  type WebhookCompletion,
  webhookSetValues,
} from '../rows/webhook-outcome-rows.js';

/**
 * Write the outcomes of `items` on `tx` (a transaction) and say, in input order, which fences held.
 * PostgreSQL: one statement for the whole group (a round trip per message would dominate a sender's
 * time). A SQLite file the store opened: one prepared update per message, by the rowid its claim found.
 * MySQL and a caller's SQLite dialect: one update per message.
 */
export async function writeWebhookCompletions(
  dialect: SqlDialect,
  runner: SqlRunner,
  claims: SqlClaims,
  tx: Db,
  items: readonly WebhookCompletion[],
): Promise<boolean[]> {
  if (items.length === 0) return [];
  const fast = dialect.writeWebhookCompletions(runner, claims, tx, items);
  if (fast) return fast;
  const written: boolean[] = [];
  const text = `UPDATE mailroom_webhook_messages SET ${WEBHOOK_SET} WHERE ${WEBHOOK_FENCE}`;
  for (const item of items) {
    const { affected } = await runner.run(tx, text, [...webhookSetValues(item), item.id, item.leaseToken]);
    written.push(affected > 0);
  }
  return written;
}
