import type { Db } from '../../connection/connect.js';
import type { SqlRunner } from '../../connection/sql-runner.js';
import type { Codec } from '../../rows/codec.js';
import { eventParams } from '../../rows/event-rows.js';
import type { OutcomeItem } from '../../rows/outcome-rows.js';
import { OUTCOME_FIELDS, outcomeRow, outcomeSet } from '../../rows/outcome-rows.js';
import { type WebhookCompletion, webhookSetValues } from '../../rows/webhook-outcome-rows.js';

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
  const { rows } = await runner.run<{ id: string }>(db, OUTCOMES, outcomeColumns(codec, group), true);
  const written = new Set(rows.map((r) => r.id));
  return group.map((item) => written.has(item.id));
}

/** The group's outcomes as one array per field of {@link OUTCOME_FIELDS}. */
function outcomeColumns(codec: Codec, group: readonly OutcomeItem[]): unknown[][] {
  const columns: unknown[][] = Array.from({ length: 10 }, () => []);
  for (const item of group) {
    outcomeRow(codec, item).forEach((value, i) => {
      columns[i]?.push(value);
    });
  }
  return columns;
}

const OUTCOMES = `UPDATE mailroom_deliveries AS d SET ${outcomeSet('::jsonb')}
    FROM unnest(?::text[], ?::bigint[], ?::text[], ?::bigint[], ?::integer[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[])
      AS v(${OUTCOME_FIELDS})
    WHERE d.id = v.id AND CASE WHEN d.status = 'sending' THEN d.lease_token END = v.lease_token
    RETURNING d.id`;

/**
 * The outcomes and their events in ONE statement (one round trip, one implicit transaction), where the
 * transaction of `completeDeliveries` takes four (begin, the outcomes, the events, commit): the events of
 * an outcome whose fence did not hold are not inserted (each event row carries the id of its outcome's
 * delivery, matched against the updated ids). Undefined when an outbox holds webhook messages: the caller
 * then writes in a transaction.
 */
export async function writePostgresWithEvents(
  db: Db,
  runner: SqlRunner,
  codec: Codec,
  group: readonly OutcomeItem[],
): Promise<boolean[] | undefined> {
  const events: unknown[][] = Array.from({ length: 9 }, () => []);
  for (const item of group) {
    const outbox = item.outcome.outbox;
    if (!outbox) continue;
    if (outbox.messages.length > 0) return undefined;
    for (const event of outbox.events) {
      [item.id, ...eventParams(codec, event)].forEach((value, i) => {
        events[i]?.push(value);
      });
    }
  }
  const text = `WITH done AS (${OUTCOMES}),
    added AS (INSERT INTO mailroom_events (id, project_id, type, mailing_ref, delivery_id, address, data, created_at)
      SELECT e.id, e.project_id, e.type, e.mailing_ref, e.delivery_id, e.address, e.data::jsonb, e.created_at
      FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[])
        AS e(owner, id, project_id, type, mailing_ref, delivery_id, address, data, created_at)
      WHERE e.owner IN (SELECT id FROM done))
    SELECT id FROM done`;
  const { rows } = await runner.run<{ id: string }>(
    db,
    text,
    [...outcomeColumns(codec, group), ...events],
    true,
  );
  const written = new Set(rows.map((r) => r.id));
  return group.map((item) => written.has(item.id));
}

/**
 * Webhook outcomes: one `UPDATE ... FROM unnest(...)`. The fence is matched on id and token together, so
 * a message present twice in a group (sent again under a newer lease) is reported written only for its
 * token. As for deliveries, the status check is a `CASE`, so that the planner looks each message up by id.
 */
export async function writeWebhooksPostgres(
  runner: SqlRunner,
  tx: Db,
  items: readonly WebhookCompletion[],
): Promise<boolean[]> {
  const columns: unknown[][] = Array.from({ length: 7 }, () => []);
  for (const item of items) {
    [...webhookSetValues(item), item.id, item.leaseToken].forEach((value, i) => {
      columns[i]?.push(value);
    });
  }
  const text = `UPDATE mailroom_webhook_messages AS m SET status = v.status, lease_expires_at = NULL,
      next_attempt_at = COALESCE(v.next_attempt_at, m.next_attempt_at), last_status_code = v.status_code,
      last_error = v.error, updated_at = v.updated_at
    FROM unnest(?::text[], ?::bigint[], ?::integer[], ?::text[], ?::bigint[], ?::text[], ?::bigint[])
      AS v(status, next_attempt_at, status_code, error, updated_at, id, lease_token)
    WHERE m.id = v.id AND CASE WHEN m.status = 'sending' THEN m.lease_token END = v.lease_token
    RETURNING m.id, m.lease_token`;
  const { rows } = await runner.run<{ id: string; lease_token: string | number }>(tx, text, columns, true);
  const held = new Set(rows.map((row) => `${row.id} ${Number(row.lease_token)}`));
  return items.map((item) => held.has(`${item.id} ${item.leaseToken}`));
}
