import type { ClaimedDelivery, DeliveryQueue } from '@mailroom/core';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import type { Row } from '../rows/codec.js';
import { DELIVERY_COLUMNS, DELIVERY_JSON_COLUMNS } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';
import { IN_LIST_SIZE } from '../sql-context.js';
import { completeDeliveries } from '../writes/delivery-completions.js';
import { writeOutbox } from './event-store.js';
import { sqlFairClaims } from './fair-claims.js';
import { andOpenAt } from './open-deliveries.js';
import { activePauses, notPausedClause } from './pause-store.js';

/** The claim order of deliveries (`DeliveryRecord.priority`): single messages, then broadcasts. */
const DELIVERY_PRIORITIES = [0, 1] as const;

/** Mailing statuses whose deliveries are never claimed (a scheduled mailing's are due by time alone). */
const BLOCKED_MAILINGS = `('cancelled', 'failed')`;
/**
 * The claim condition that `d` is not a delivery of a blocked mailing. PostgreSQL and SQLite get a
 * `NOT IN` over the (few) blocked mailings, which they run once as a hashed filter while walking the due
 * index in order; as an anti-join, PostgreSQL misjudges its size and sorts every due row instead. A
 * dialect whose claim is pinned to the due index (`forcesIndexes`: MySQL) checks each candidate's
 * mailing by primary key.
 */
const notBlocked = (dialect: SqlDialect): string =>
  dialect.forcesIndexes
    ? `NOT EXISTS (SELECT 1 FROM mailroom_mailings m WHERE m.id = d.mailing_id AND m.status IN ${BLOCKED_MAILINGS})`
    : `d.mailing_id NOT IN (SELECT m.id FROM mailroom_mailings m WHERE m.status IN ${BLOCKED_MAILINGS})`;

/** `DeliveryQueue` on SQL. The worker's hot path: claims, leases and outcomes. The dialects' claim statements are in the dialect folders. */
export function sqlDeliveryQueue(ctx: SqlContext): DeliveryQueue {
  const { dialect, db, runner, codec, claims, guard, write } = ctx;
  const notBlockedSql = notBlocked(dialect);
  // Open deliveries: by the stored `open_at` column where the deliveries carry one (MySQL; PostgreSQL
  // since migration 034, whose claim it makes a HOT update), else by status (SQLite's partial due index).
  const openAt = dialect.openAtColumn || dialect.partialOpenAt;
  const openOnly = andOpenAt(dialect);
  const fair = sqlFairClaims(ctx);

  return {
    claimDeliveries(claimOptions) {
      return guard('claimDeliveries', async () => {
        if (claimOptions.limit <= 0) return [];
        const now = claimOptions.now.getTime();
        const until = now + claimOptions.leaseMs;
        // The pauses in force (a small table, read whole): none, and the claim is the one it always was.
        const [notPaused, pausedParams] = notPausedClause(await activePauses(ctx, now));
        // One claim per priority, single messages first: each is one range of the due index (priority,
        // due time) on every database (migration 019), so a broadcast's backlog costs the claim of a
        // single message nothing, and the claim stays one statement when either lane is enough.
        const inDueOrder = async (priority: number, limit: number): Promise<ClaimedDelivery[]> => {
          const due = openAt
            ? `d.priority = ? AND d.open_at <= ? AND (d.status = 'queued' OR d.lease_expires_at <= ?) AND ${notBlockedSql}${notPaused} ORDER BY d.open_at`
            : `d.status IN ('queued', 'sending') AND d.priority = ? AND d.next_attempt_at <= ? AND (d.status = 'queued' OR d.lease_expires_at <= ?) AND ${notBlockedSql}${notPaused} ORDER BY d.next_attempt_at`;
          return (await claims.claim(db, {
            table: 'mailroom_deliveries',
            due,
            dueParams: [priority, now, now, ...pausedParams],
            limit,
            mysqlIndex: 'mailroom_deliveries_due',
            set: "status = 'sending', lease_expires_at = ?, lease_token = lease_token + 1, attempts = attempts + 1, updated_at = ?",
            setParams: [until, now],
            columns: DELIVERY_COLUMNS,
            decode: codec.delivery,
            decodeValues: codec.deliveryValues,
            jsonColumns: DELIVERY_JSON_COLUMNS,
            rememberRowids: true,
          })) as ClaimedDelivery[];
        };
        const claimed: ClaimedDelivery[] = [];
        for (const priority of DELIVERY_PRIORITIES) {
          const limit = claimOptions.limit - claimed.length;
          if (limit <= 0) break;
          // Broadcasts: each project with open broadcasts gets its share (fair-claims.ts).
          const rows =
            priority === 0
              ? await inDueOrder(priority, limit)
              : await fair.claim(now, until, limit, [notPaused, pausedParams], (room) =>
                  inDueOrder(priority, room),
                );
          claimed.push(...rows.sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime()));
        }
        return claimed;
      });
    },

    renewLeases(leases, until) {
      return guard('renewLeases', async () => {
        const renewed: string[] = [];
        for (let i = 0; i < leases.length; i += IN_LIST_SIZE) {
          renewed.push(...(await claims.renew(db, leases.slice(i, i + IN_LIST_SIZE), until.getTime())));
        }
        return renewed;
      });
    },

    completeDeliveries(items) {
      // Retried group by group inside (a group commits on its own), not as a whole.
      return guard(
        'completeDeliveries',
        () => completeDeliveries({ dialect, db, runner, claims, codec, writeOutbox }, items),
        {
          retry: false,
        },
      );
    },

    settleOpenDeliveries(mailingId, status, reason, now) {
      return guard('settleOpenDeliveries', () =>
        write(
          `UPDATE mailroom_deliveries SET status = ?, last_error = ?, lease_expires_at = NULL, updated_at = ?
           WHERE mailing_id = ?${openOnly} AND (status = 'queued' OR (status = 'sending' AND lease_expires_at <= ?))`,
          [status, reason, now.getTime(), mailingId, now.getTime()],
        ),
      );
    },

    nextDueAt(at = new Date()) {
      return guard('nextDueAt', async () => {
        const [notPaused, pausedParams] = notPausedClause(await activePauses(ctx, at.getTime()));
        // The earliest of each priority's first (one index range each, see the claim).
        let first: number | undefined;
        for (const priority of DELIVERY_PRIORITIES) {
          const [row] = await claims.inDueOrder<Row>(
            db,
            openAt
              ? `SELECT d.next_attempt_at FROM mailroom_deliveries d WHERE d.priority = ? AND d.open_at IS NOT NULL AND d.status = 'queued' AND ${notBlockedSql}${notPaused} ORDER BY d.open_at LIMIT 1`
              : `SELECT d.next_attempt_at FROM mailroom_deliveries d WHERE d.status IN ('queued', 'sending') AND d.priority = ? AND d.status = 'queued' AND ${notBlockedSql}${notPaused} ORDER BY d.next_attempt_at LIMIT 1`,
            [priority, ...pausedParams],
          );
          const at = row ? Number(row.next_attempt_at) : undefined;
          if (at !== undefined && (first === undefined || at < first)) first = at;
        }
        return first === undefined ? undefined : new Date(first);
      });
    },
  };
}
