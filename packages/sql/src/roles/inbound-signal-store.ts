import type {
  InboundSignalKind,
  InboundSignalRecord,
  InboundSignalResult,
  InboundSignalSource,
  InboundSignalStore,
  InboundSignalWrite,
  SignalCount,
  SuppressionRecord,
} from '@mailroom/core';
import { foldAddress } from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { Row } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';
import { writeOutbox } from './event-store.js';

const SIGNAL_COLUMNS = [
  'id',
  'project_id',
  'mailing_id',
  'delivery_id',
  'address',
  'domain',
  'kind',
  'source',
  'reason',
  'status',
  'diagnostic',
  'reported_address',
  'reported_message_id',
  'dedupe_key',
  'created_at',
] as const;

/**
 * The SQL store's inbound-signal role: one transaction per signal. The signal's unique `dedupe_key`
 * decides, first, whether anything is written (a racing duplicate waits on the key's row lock, then
 * inserts nothing); the streak is incremented in SQL; suppressions and the delivery's status change are
 * conditional statements, so no value is read and written back.
 */
export function sqlInboundSignalStore(ctx: SqlContext): InboundSignalStore {
  const { db, runner, codec, guard, dialect } = ctx;
  const write = async (tx: Db, text: string, params: unknown[]): Promise<number> =>
    (await runner.run(tx, text, params)).affected;
  const insertIgnore = (table: string, columns: readonly string[], key: string): string =>
    dialect.insertIgnore(table, columns.join(', '), runner.values(1, columns.length), key);

  const suppress = (tx: Db, row: SuppressionRecord): Promise<number> =>
    write(
      tx,
      insertIgnore(
        'mailroom_suppressions',
        ['project_id', 'address', 'reason', 'detail', 'created_at'],
        'project_id, address',
      ),
      // Folded, as addSuppression stores it: case variants of an address are one suppression.
      [row.projectId, foldAddress(row.address), row.reason, row.detail, row.createdAt.getTime()],
    );

  const latest = async (tx: Db, text: string, params: unknown[]): Promise<number> => {
    const [row] = (await runner.run<Row>(tx, text, params)).rows;
    const t = row?.t;
    return t === null || t === undefined ? 0 : Number(t);
  };

  /**
   * The address's recipient-side bounces since its last delivery, as `InboundSignalWrite` states. The
   * deliveries are found through the project's mailings updated in the window (the deliveries' unique
   * mailing-and-address index), never by a scan of every delivery.
   */
  const recipientSideBounces = async (
    tx: Db,
    projectId: string,
    address: string,
    rule: NonNullable<InboundSignalWrite['mailboxUnavailable']>,
  ): Promise<number> => {
    const since = rule.since.getTime();
    const reported = await latest(
      tx,
      `SELECT MAX(created_at) AS t FROM mailroom_inbound_signals
       WHERE project_id = ? AND kind = 'delivered' AND address = ? AND created_at >= ?`,
      [projectId, address, since],
    );
    const accepted = await latest(
      tx,
      `SELECT MAX(d.sent_at) AS t FROM mailroom_mailings m
       JOIN mailroom_deliveries d ON d.mailing_id = m.id AND d.address = ?
       WHERE m.project_id = ? AND m.updated_at >= ? AND d.status = 'sent' AND d.sent_at >= ?
         AND NOT EXISTS (SELECT 1 FROM mailroom_inbound_signals s
           WHERE s.delivery_id = d.id AND s.kind IN ('hard-bounce', 'soft-bounce', 'sender-side'))`,
      [address, projectId, since, since],
    );
    const after = Math.max(reported, accepted);
    const [row] = (
      await runner.run<Row>(
        tx,
        `SELECT COUNT(DISTINCT delivery_id) AS n FROM mailroom_inbound_signals
         WHERE project_id = ? AND kind = 'soft-bounce' AND address = ? AND created_at >= ? AND created_at > ?
           AND reason IN ${runner.values(1, rule.reasons.length)}`,
        [projectId, address, since, after, ...rule.reasons],
      )
    ).rows;
    return Number(row?.n ?? 0);
  };

  return {
    applyInboundSignal(input: InboundSignalWrite) {
      return guard('applyInboundSignal', () =>
        runner.transaction(db, async (tx): Promise<InboundSignalResult> => {
          const { signal, now } = input;
          const at = now.getTime();
          const result: InboundSignalResult = {
            applied: false,
            deliveryChanged: false,
            suppressed: false,
            softBounces: null,
          };
          const inserted = await write(
            tx,
            insertIgnore('mailroom_inbound_signals', SIGNAL_COLUMNS, 'dedupe_key'),
            [
              signal.id,
              signal.projectId,
              signal.mailingId,
              signal.deliveryId,
              signal.address,
              signal.domain,
              signal.kind,
              signal.source,
              signal.reason,
              signal.status,
              signal.diagnostic,
              signal.reportedAddress,
              signal.reportedMessageId,
              signal.dedupeKey,
              signal.createdAt.getTime(),
            ],
          );
          if (inserted === 0) return result;
          result.applied = true;
          if (input.delivery && input.delivery.from.length > 0) {
            const { status, from, lastError } = input.delivery;
            const changed = await write(
              tx,
              `UPDATE mailroom_deliveries SET status = ?, last_error = ?, updated_at = ?
               WHERE id = ? AND status IN ${runner.values(1, from.length)}`,
              [status, lastError, at, signal.deliveryId, ...from],
            );
            result.deliveryChanged = changed > 0;
          }
          const addressKey = [signal.projectId, signal.address];
          if (input.resetSoftBounces) {
            await write(
              tx,
              'DELETE FROM mailroom_soft_bounces WHERE project_id = ? AND address = ?',
              addressKey,
            );
            result.softBounces = 0;
          }
          if (input.softBounce) {
            const head =
              'INSERT INTO mailroom_soft_bounces (project_id, address, soft_count, updated_at) VALUES (?, ?, 1, ?)';
            await write(
              tx,
              `${head}${dialect.onConflictUpdate('mailroom_soft_bounces', 'project_id, address', ({ stored, incoming }) => [`soft_count = ${stored('soft_count')} + 1`, `updated_at = ${incoming('updated_at')}`])}`,
              [...addressKey, at],
            );
            const [row] = (
              await runner.run<Row>(
                tx,
                'SELECT soft_count FROM mailroom_soft_bounces WHERE project_id = ? AND address = ?',
                addressKey,
              )
            ).rows;
            result.softBounces = Number(row?.soft_count ?? 0);
            if (result.softBounces >= input.softBounce.suppressAt) {
              result.suppressed = (await suppress(tx, input.softBounce.suppression)) > 0;
            }
          }
          if (input.mailboxUnavailable) {
            const rule = input.mailboxUnavailable;
            const count = await recipientSideBounces(tx, signal.projectId, signal.address, rule);
            result.mailboxUnavailable = count;
            if (count >= rule.suppressAt) {
              result.suppressed = (await suppress(tx, rule.suppression)) > 0 || result.suppressed;
            }
          }
          if (input.suppress) {
            result.suppressed = (await suppress(tx, input.suppress)) > 0 || result.suppressed;
          }
          if (input.unsubscribe) {
            const head =
              "INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at) VALUES (?, ?, NULL, '{}', 'unsubscribed', '[]', ?, ?)";
            await write(
              tx,
              `${head}${dialect.onConflictUpdate('mailroom_profiles', 'project_id, address', ({ incoming }) => [`status = ${incoming('status')}`, `updated_at = ${incoming('updated_at')}`])}`,
              [...addressKey, at, at],
            );
          }
          await writeOutbox(runner, codec, tx, [input.outbox]);
          return result;
        }),
      );
    },

    listInboundSignals(deliveryId) {
      return guard('listInboundSignals', async () => {
        const { rows } = await runner.run<Row>(
          db,
          `SELECT ${SIGNAL_COLUMNS.join(', ')} FROM mailroom_inbound_signals WHERE delivery_id = ? ORDER BY created_at, id`,
          [deliveryId],
        );
        return rows.map(signalOf);
      });
    },

    countInboundSignals(query) {
      return guard('countInboundSignals', async () => {
        if (query.kinds.length === 0) return [];
        const where = ['project_id = ?', `kind IN ${runner.values(1, query.kinds.length)}`];
        const params: unknown[] = [query.projectId, ...query.kinds];
        if (query.mailingId !== undefined) {
          where.push('mailing_id = ?');
          params.push(query.mailingId);
        }
        if (query.domain !== undefined) {
          where.push('domain = ?');
          params.push(query.domain);
        }
        if (query.since !== undefined) {
          where.push('created_at >= ?');
          params.push(query.since.getTime());
        }
        const { rows } = await runner.run<Row>(
          db,
          `SELECT kind, domain, reason, COUNT(*) AS n FROM mailroom_inbound_signals
           WHERE ${where.join(' AND ')} GROUP BY kind, domain, reason`,
          params,
        );
        // Few groups: ordered here, so that every database orders them alike (nulls, collations).
        return rows
          .map(
            (row): SignalCount => ({
              kind: String(row.kind) as InboundSignalKind,
              domain: String(row.domain ?? ''),
              reason: row.reason === null || row.reason === undefined ? null : String(row.reason),
              count: Number(row.n),
            }),
          )
          .sort(
            (a, b) =>
              b.count - a.count ||
              compare(a.domain, b.domain) ||
              compare(a.kind, b.kind) ||
              compare(a.reason, b.reason),
          );
      });
    },
  };
}

/** Ascending by code unit, a null first (the order the memory store gives). */
function compare(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

function signalOf(row: Row): InboundSignalRecord {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    mailingId: String(row.mailing_id ?? ''),
    deliveryId: String(row.delivery_id),
    address: String(row.address),
    domain: String(row.domain ?? ''),
    kind: String(row.kind) as InboundSignalKind,
    source: String(row.source) as InboundSignalSource,
    reason: text(row.reason),
    status: text(row.status),
    diagnostic: text(row.diagnostic),
    reportedAddress: text(row.reported_address),
    reportedMessageId: text(row.reported_message_id),
    dedupeKey: String(row.dedupe_key),
    createdAt: new Date(Number(row.created_at)),
  };
}
