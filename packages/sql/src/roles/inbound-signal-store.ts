import type {
  InboundSignalKind,
  InboundSignalRecord,
  InboundSignalResult,
  InboundSignalSource,
  InboundSignalStore,
  InboundSignalWrite,
  SuppressionRecord,
} from '@mailroom/core';
import type { Row } from '../codec.js';
import type { Db } from '../connect.js';
import type { SqlContext } from '../sql-context.js';
import { writeOutbox } from './event-store.js';

const SIGNAL_COLUMNS = [
  'id',
  'project_id',
  'delivery_id',
  'address',
  'kind',
  'source',
  'status',
  'diagnostic',
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
  const { db, r, c, guard, mysql } = ctx;
  const write = async (tx: Db, text: string, params: unknown[]): Promise<number> =>
    (await r.run(tx, text, params)).affected;
  const insertIgnore = (table: string, columns: readonly string[], key: string): string =>
    mysql
      ? `INSERT IGNORE INTO ${table} (${columns.join(', ')}) VALUES ${r.values(1, columns.length)}`
      : `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${r.values(1, columns.length)} ON CONFLICT (${key}) DO NOTHING`;

  const suppress = (tx: Db, row: SuppressionRecord): Promise<number> =>
    write(
      tx,
      insertIgnore(
        'mailroom_suppressions',
        ['project_id', 'address', 'reason', 'detail', 'created_at'],
        'project_id, address',
      ),
      [row.projectId, row.address, row.reason, row.detail, row.createdAt.getTime()],
    );

  return {
    applyInboundSignal(input: InboundSignalWrite) {
      return guard('applyInboundSignal', () =>
        r.transaction(db, async (tx): Promise<InboundSignalResult> => {
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
              signal.deliveryId,
              signal.address,
              signal.kind,
              signal.source,
              signal.status,
              signal.diagnostic,
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
               WHERE id = ? AND status IN ${r.values(1, from.length)}`,
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
              mysql
                ? `${head} ON DUPLICATE KEY UPDATE soft_count = soft_count + 1, updated_at = VALUES(updated_at)`
                : `${head} ON CONFLICT (project_id, address) DO UPDATE SET soft_count = mailroom_soft_bounces.soft_count + 1, updated_at = excluded.updated_at`,
              [...addressKey, at],
            );
            const [row] = (
              await r.run<Row>(
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
          if (input.suppress) {
            result.suppressed = (await suppress(tx, input.suppress)) > 0 || result.suppressed;
          }
          if (input.unsubscribe) {
            const head =
              "INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at) VALUES (?, ?, NULL, '{}', 'unsubscribed', '[]', ?, ?)";
            await write(
              tx,
              mysql
                ? `${head} ON DUPLICATE KEY UPDATE status = VALUES(status), updated_at = VALUES(updated_at)`
                : `${head} ON CONFLICT (project_id, address) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at`,
              [...addressKey, at, at],
            );
          }
          await writeOutbox(r, c, tx, [input.outbox]);
          return result;
        }),
      );
    },

    listInboundSignals(deliveryId) {
      return guard('listInboundSignals', async () => {
        const { rows } = await r.run<Row>(
          db,
          `SELECT ${SIGNAL_COLUMNS.join(', ')} FROM mailroom_inbound_signals WHERE delivery_id = ? ORDER BY created_at, id`,
          [deliveryId],
        );
        return rows.map(signalOf);
      });
    },
  };
}

function signalOf(row: Row): InboundSignalRecord {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    deliveryId: String(row.delivery_id),
    address: String(row.address),
    kind: String(row.kind) as InboundSignalKind,
    source: String(row.source) as InboundSignalSource,
    status: text(row.status),
    diagnostic: text(row.diagnostic),
    dedupeKey: String(row.dedupe_key),
    createdAt: new Date(Number(row.created_at)),
  };
}
