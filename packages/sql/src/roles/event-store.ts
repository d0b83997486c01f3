import type {
  ClaimedWebhookMessage,
  EventRecord,
  EventStore,
  EventType,
  OutboxWrite,
  WebhookAttemptRecord,
  WebhookEndpointRecord,
  WebhookMessageRecord,
  WebhookMessageStatus,
} from '@mailroom/core';
import { WEBHOOK_PRIORITIES } from '@mailroom/core';
import type Database from 'better-sqlite3';
import type { SqlClaims } from '../claims/sql-claims.js';
import type { Db } from '../connection/connect.js';
import type { SqlRunner } from '../connection/sql-runner.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import type { Codec, Row } from '../rows/codec.js';
import { ms } from '../rows/codec.js';
import { EVENT_COLUMNS, eventParams } from '../rows/event-rows.js';
import { WEBHOOK_FENCE } from '../rows/webhook-outcome-rows.js';
import type { GuardOptions, SqlContext } from '../sql-context.js';
import { writeWebhookCompletions } from '../writes/webhook-completions.js';

const MESSAGE_COLUMNS = [
  'id',
  'project_id',
  'endpoint_id',
  'event_id',
  'event_type',
  'payload',
  'priority',
  'status',
  'attempts',
  'next_attempt_at',
  'lease_expires_at',
  'lease_token',
  'last_status_code',
  'last_error',
  'created_at',
  'updated_at',
] as const;

const ENDPOINT_COLUMNS = [
  'id',
  'project_id',
  'url',
  'events',
  'secret',
  'enabled',
  'disabled_reason',
  'failing_since',
  'circuit_open_until',
  'created_at',
  'updated_at',
] as const;

const ATTEMPT_COLUMNS = [
  'id',
  'project_id',
  'endpoint_id',
  'message_id',
  'event_type',
  'attempt',
  'status_code',
  'latency_ms',
  'error',
  'created_at',
] as const;

/** What the event members of the SQL store share with the rest of it. */
export interface SqlEventsDeps {
  dialect: SqlDialect;
  db: Db;
  runner: SqlRunner;
  codec: Codec;
  claims: SqlClaims;
  /** The store's wrapper of every operation (closed check, contention retries, error mapping). */
  guard<T>(operation: string, fn: () => Promise<T>, options?: GuardOptions): Promise<T>;
}

/**
 * Insert the events and webhook messages of `outboxes` on `tx`, the transaction of the change they
 * belong to. On a SQLite file the store opened: one prepared insert per row, run directly (the hot path
 * of delivery outcomes); elsewhere multi-row inserts.
 */
export async function writeOutbox(
  runner: SqlRunner,
  codec: Codec,
  tx: Db,
  outboxes: ReadonlyArray<OutboxWrite | undefined>,
): Promise<void> {
  const events: unknown[][] = [];
  const messages: unknown[][] = [];
  for (const outbox of outboxes) {
    if (!outbox) continue;
    for (const e of outbox.events) events.push(eventParams(codec, e));
    for (const m of outbox.messages) messages.push(messageParams(m));
  }
  await insertRows(runner, tx, 'mailroom_events', EVENT_COLUMNS, events);
  await insertRows(runner, tx, 'mailroom_webhook_messages', MESSAGE_COLUMNS, messages);
}

async function insertRows(
  runner: SqlRunner,
  tx: Db,
  table: string,
  columns: readonly string[],
  rows: unknown[][],
): Promise<void> {
  if (rows.length === 0) return;
  const head = `INSERT INTO ${table} (${columns.join(', ')}) VALUES `;
  if (runner.direct) {
    const statement = runner.statement(tx, head + runner.values(1, columns.length)) as Database.Statement;
    for (const row of rows) statement.run(row);
    return;
  }
  for (const chunk of runner.chunk(rows, columns.length)) {
    await runner.run(tx, head + runner.values(chunk.length, columns.length), chunk.flat());
  }
}

function messageParams(m: WebhookMessageRecord): unknown[] {
  return [
    m.id,
    m.projectId,
    m.endpointId,
    m.eventId,
    m.eventType,
    m.payload,
    m.priority,
    m.status,
    m.attempts,
    m.nextAttemptAt.getTime(),
    ms(m.leaseExpiresAt),
    m.leaseToken,
    m.lastStatusCode,
    m.lastError,
    m.createdAt.getTime(),
    m.updatedAt.getTime(),
  ];
}

const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value));
const numOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : num(value);
const dateOrNull = (value: unknown): Date | null =>
  value === null || value === undefined ? null : new Date(num(value));
const strOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);

/** `EventStore` on SQL: the event outbox, webhook endpoints and the webhook queue. */
export function sqlEventStore(ctx: SqlContext): EventStore {
  return createSqlEvents({
    dialect: ctx.dialect,
    db: ctx.db,
    runner: ctx.runner,
    codec: ctx.codec,
    claims: ctx.claims,
    guard: ctx.guard,
  });
}

/** The `EventStore` members of the SQL store. */
function createSqlEvents({ dialect, db, runner, codec, claims, guard }: SqlEventsDeps): EventStore {
  // Open messages: by the stored `open_at` column where the dialect keeps one, else by status (the
  // partial due index).
  const openAt = dialect.openAtColumn;
  const all = async (text: string, params: unknown[] = [], on: Db = db): Promise<Row[]> =>
    (await runner.run<Row>(on, text, params)).rows;
  const write = async (text: string, params: unknown[] = [], on: Db = db): Promise<number> =>
    (await runner.run(on, text, params)).affected;

  const event = (row: Row): EventRecord => ({
    id: String(row.id),
    projectId: String(row.project_id),
    type: String(row.type) as EventType,
    mailingRef: strOrNull(row.mailing_ref),
    deliveryId: strOrNull(row.delivery_id),
    address: strOrNull(row.address),
    data: codec.fromJson(row.data),
    createdAt: new Date(num(row.created_at)),
  });
  const endpoint = (row: Row): WebhookEndpointRecord => ({
    id: String(row.id),
    projectId: String(row.project_id),
    url: String(row.url),
    events: codec.fromJson<EventType[] | null>(row.events),
    secret: String(row.secret),
    enabled: num(row.enabled) === 1 || row.enabled === true,
    disabledReason: strOrNull(row.disabled_reason),
    failingSince: dateOrNull(row.failing_since),
    circuitOpenUntil: dateOrNull(row.circuit_open_until),
    createdAt: new Date(num(row.created_at)),
    updatedAt: new Date(num(row.updated_at)),
  });
  const message = (row: Row): WebhookMessageRecord => ({
    id: String(row.id),
    projectId: String(row.project_id),
    endpointId: String(row.endpoint_id),
    eventId: String(row.event_id),
    eventType: String(row.event_type) as EventType,
    payload: String(row.payload),
    priority: num(row.priority) === 1 ? 1 : 0,
    status: String(row.status) as WebhookMessageStatus,
    attempts: num(row.attempts),
    nextAttemptAt: new Date(num(row.next_attempt_at)),
    leaseExpiresAt: dateOrNull(row.lease_expires_at),
    leaseToken: num(row.lease_token),
    lastStatusCode: numOrNull(row.last_status_code),
    lastError: strOrNull(row.last_error),
    createdAt: new Date(num(row.created_at)),
    updatedAt: new Date(num(row.updated_at)),
  });
  const attempt = (row: Row): WebhookAttemptRecord => ({
    id: String(row.id),
    projectId: String(row.project_id),
    endpointId: String(row.endpoint_id),
    messageId: String(row.message_id),
    eventType: String(row.event_type) as EventType,
    attempt: num(row.attempt),
    statusCode: numOrNull(row.status_code),
    latencyMs: num(row.latency_ms),
    error: strOrNull(row.error),
    createdAt: new Date(num(row.created_at)),
  });

  return {
    insertOutbox(outbox) {
      return guard('insertOutbox', () =>
        runner.transaction(db, (tx) => writeOutbox(runner, codec, tx, [outbox])),
      );
    },

    listEvents(projectId, filter, page) {
      return guard('listEvents', async () => {
        // A delivery's events are found by its index: SQLite would otherwise walk the project's index
        // (which gives the order for free) through every event of the project, a large broadcast's too.
        let where = `${filter.deliveryId !== undefined ? dialect.unindexed('project_id') : 'project_id'} = ?`;
        const params: unknown[] = [projectId];
        if (page.after !== undefined && page.after !== null) {
          where += ' AND id > ?';
          params.push(page.after);
        }
        if (filter.types !== undefined) {
          if (filter.types.length === 0) return [];
          where += ` AND type IN ${runner.values(1, filter.types.length)}`;
          params.push(...filter.types);
        }
        for (const [column, value] of [
          ['mailing_ref', filter.mailingRef],
          ['address', filter.address],
          ['delivery_id', filter.deliveryId],
        ] as const) {
          if (value === undefined) continue;
          where += ` AND ${column} = ?`;
          params.push(value);
        }
        params.push(page.limit);
        return (await all(`SELECT * FROM mailroom_events WHERE ${where} ORDER BY id LIMIT ?`, params)).map(
          event,
        );
      });
    },

    addWebhookEndpoint(e) {
      return guard('addWebhookEndpoint', async () => {
        await write(
          `INSERT INTO mailroom_webhook_endpoints (${ENDPOINT_COLUMNS.join(', ')}) VALUES ${runner.values(1, ENDPOINT_COLUMNS.length)}`,
          [
            e.id,
            e.projectId,
            e.url,
            codec.json(e.events),
            e.secret,
            e.enabled ? 1 : 0,
            e.disabledReason,
            ms(e.failingSince),
            ms(e.circuitOpenUntil),
            e.createdAt.getTime(),
            e.updatedAt.getTime(),
          ],
        );
      });
    },

    listWebhookEndpoints(projectId) {
      return guard('listWebhookEndpoints', async () =>
        (
          await all('SELECT * FROM mailroom_webhook_endpoints WHERE project_id = ? ORDER BY created_at, id', [
            projectId,
          ])
        ).map(endpoint),
      );
    },

    getWebhookEndpoint(id) {
      return guard('getWebhookEndpoint', async () => {
        const [row] = await all('SELECT * FROM mailroom_webhook_endpoints WHERE id = ?', [id]);
        return row && endpoint(row);
      });
    },

    updateWebhookEndpoint(projectId, id, patch, now) {
      return guard('updateWebhookEndpoint', async () => {
        const sets = ['updated_at = ?'];
        const params: unknown[] = [now.getTime()];
        const given: Array<[string, unknown]> = [
          ['url', patch.url],
          ['events', patch.events === undefined ? undefined : codec.json(patch.events)],
          ['secret', patch.secret],
          ['enabled', patch.enabled === undefined ? undefined : patch.enabled ? 1 : 0],
          ['disabled_reason', patch.disabledReason],
        ];
        for (const [column, value] of given) {
          if (value === undefined) continue;
          sets.push(`${column} = ?`);
          params.push(value);
        }
        return (
          (await write(
            `UPDATE mailroom_webhook_endpoints SET ${sets.join(', ')} WHERE id = ? AND project_id = ?`,
            [...params, id, projectId],
          )) > 0
        );
      });
    },

    setWebhookEndpointHealth(id, failingSince) {
      return guard('setWebhookEndpointHealth', async () => {
        if (failingSince === null) {
          await write('UPDATE mailroom_webhook_endpoints SET failing_since = NULL WHERE id = ?', [id]);
        } else {
          // One statement: of racing first failures, the first to write keeps its date.
          await write(
            'UPDATE mailroom_webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL',
            [failingSince.getTime(), id],
          );
        }
        const [row] = await all('SELECT failing_since FROM mailroom_webhook_endpoints WHERE id = ?', [id]);
        return row ? dateOrNull(row.failing_since) : undefined;
      });
    },

    setWebhookCircuit(id, openUntil) {
      return guard('setWebhookCircuit', () =>
        runner.transaction(db, async (tx) => {
          const found = await write(
            'UPDATE mailroom_webhook_endpoints SET circuit_open_until = ? WHERE id = ?',
            [ms(openUntil), id],
            tx,
          );
          if (found === 0 || openUntil === null) return found > 0;
          const until = openUntil.getTime();
          // Per priority, over the due index (as a claim walks it), not over every message ever sent.
          for (const priority of WEBHOOK_PRIORITIES) {
            await write(
              openAt
                ? `UPDATE mailroom_webhook_messages${dialect.forceIndex('mailroom_webhook_messages_due')} SET next_attempt_at = ?
                   WHERE priority = ? AND open_at < ? AND status = 'pending' AND endpoint_id = ?`
                : `UPDATE mailroom_webhook_messages SET next_attempt_at = ?
                   WHERE status IN ('pending', 'sending') AND priority = ? AND next_attempt_at < ?
                     AND status = 'pending' AND endpoint_id = ?`,
              [until, priority, until, id],
              tx,
            );
          }
          return true;
        }),
      );
    },

    removeWebhookEndpoint(projectId, id) {
      return guard(
        'removeWebhookEndpoint',
        async () =>
          (await write('DELETE FROM mailroom_webhook_endpoints WHERE id = ? AND project_id = ?', [
            id,
            projectId,
          ])) > 0,
      );
    },

    claimWebhookMessages(options) {
      return guard('claimWebhookMessages', async () => {
        const now = options.now.getTime();
        const skip = options.skipEndpoints ?? [];
        const notSkipped =
          skip.length === 0 ? '' : ` AND d.endpoint_id NOT IN ${runner.values(1, skip.length)}`;
        // One claim per priority, the first first: each is an index range (priority, due time) on every
        // database, where one ORDER BY priority, due time would not be on MySQL (see migration 006).
        const claimed: WebhookMessageRecord[] = [];
        for (const priority of WEBHOOK_PRIORITIES) {
          if (options.priority !== undefined && priority !== options.priority) continue;
          const limit = options.limit - claimed.length;
          if (limit <= 0) break;
          const due = openAt
            ? `d.priority = ? AND d.open_at <= ? AND (d.status = 'pending' OR d.lease_expires_at <= ?)${notSkipped} ORDER BY d.open_at`
            : `d.status IN ('pending', 'sending') AND d.priority = ? AND d.next_attempt_at <= ? AND (d.status = 'pending' OR d.lease_expires_at <= ?)${notSkipped} ORDER BY d.next_attempt_at`;
          const rows = await claims.claim(db, {
            table: 'mailroom_webhook_messages',
            due,
            dueParams: [priority, now, now, ...skip],
            limit,
            mysqlIndex: 'mailroom_webhook_messages_due',
            set: "status = 'sending', lease_expires_at = ?, lease_token = lease_token + 1, attempts = attempts + 1, updated_at = ?",
            setParams: [now + options.leaseMs, now],
            columns: MESSAGE_COLUMNS,
            decode: message,
            rememberRowids: true,
          });
          claimed.push(
            ...(rows as WebhookMessageRecord[]).sort(
              (a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || (a.id < b.id ? -1 : 1),
            ),
          );
        }
        return claimed as ClaimedWebhookMessage[];
      });
    },

    completeWebhookMessages(items) {
      return guard(
        'completeWebhookMessages',
        () =>
          runner.transaction(db, async (tx) => {
            const written = await writeWebhookCompletions(dialect, runner, claims, tx, items);
            const attempts: unknown[][] = [];
            items.forEach(({ attempt: a }, i) => {
              if (!a || !written[i]) return;
              attempts.push([
                a.id,
                a.projectId,
                a.endpointId,
                a.messageId,
                a.eventType,
                a.attempt,
                a.statusCode,
                Math.round(a.latencyMs),
                a.error,
                a.createdAt.getTime(),
              ]);
            });
            await insertRows(runner, tx, 'mailroom_webhook_attempts', ATTEMPT_COLUMNS, attempts);
            return written;
          }),
        { retry: false },
      );
    },

    releaseWebhookMessages(items) {
      return guard('releaseWebhookMessages', () =>
        runner.transaction(db, async (tx) => {
          // Rare (a circuit opening, a lease about to end): one fenced update per message.
          const written: boolean[] = [];
          for (const item of items) {
            const changed = await write(
              `UPDATE mailroom_webhook_messages SET status = 'pending', lease_expires_at = NULL,
                 next_attempt_at = ?, attempts = attempts - 1
               WHERE ${WEBHOOK_FENCE}`,
              [item.nextAttemptAt.getTime(), item.id, item.leaseToken],
              tx,
            );
            written.push(changed > 0);
          }
          return written;
        }),
      );
    },

    requeueWebhookMessage(projectId, id, now) {
      return guard('requeueWebhookMessage', async () => {
        const changed = await write(
          `UPDATE mailroom_webhook_messages SET status = 'pending', next_attempt_at = ?, updated_at = ?
           WHERE id = ? AND project_id = ? AND status IN ('delivered', 'failed')`,
          [now.getTime(), now.getTime(), id, projectId],
        );
        return changed > 0;
      });
    },

    listWebhookMessages(projectId, filter) {
      return guard('listWebhookMessages', async () => {
        let where = 'project_id = ?';
        const params: unknown[] = [projectId];
        if (filter.endpointId !== undefined) {
          where += ' AND endpoint_id = ?';
          params.push(filter.endpointId);
        }
        if (filter.status !== undefined) {
          where += ' AND status = ?';
          params.push(filter.status);
        }
        params.push(filter.limit);
        return (
          await all(
            `SELECT * FROM mailroom_webhook_messages WHERE ${where} ORDER BY updated_at DESC, id DESC LIMIT ?`,
            params,
          )
        ).map(message);
      });
    },

    listWebhookAttempts(projectId, filter) {
      return guard('listWebhookAttempts', async () => {
        let where = 'project_id = ?';
        const params: unknown[] = [projectId];
        if (filter.endpointId !== undefined) {
          where += ' AND endpoint_id = ?';
          params.push(filter.endpointId);
        }
        if (filter.messageId !== undefined) {
          where += ' AND message_id = ?';
          params.push(filter.messageId);
        }
        params.push(filter.limit);
        return (
          await all(
            `SELECT * FROM mailroom_webhook_attempts WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ?`,
            params,
          )
        ).map(attempt);
      });
    },

    webhookQueueState() {
      return guard('webhookQueueState', async () => {
        const open = openAt ? 'open_at IS NOT NULL' : "status IN ('pending', 'sending')";
        const [oldest] = await all(
          `SELECT MIN(created_at) AS at FROM mailroom_webhook_messages WHERE ${open}`,
        );
        const [due] = await all(
          openAt
            ? "SELECT MIN(open_at) AS at FROM mailroom_webhook_messages WHERE open_at IS NOT NULL AND status = 'pending'"
            : "SELECT MIN(next_attempt_at) AS at FROM mailroom_webhook_messages WHERE status = 'pending'",
        );
        return {
          oldestPendingAt: dateOrNull(oldest?.at) ?? undefined,
          nextDueAt: dateOrNull(due?.at) ?? undefined,
        };
      });
    },
  };
}
