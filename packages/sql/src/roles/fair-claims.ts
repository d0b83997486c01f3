import type { ClaimedDelivery } from '@mailroom/core';
import { DELIVERY_COLUMNS, DELIVERY_JSON_COLUMNS } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';
import { andOpenAt } from './open-deliveries.js';

/** How long a mailing in which a fair claim found nothing due is left to the due-order claim alone. */
const REST_MS = 1_000;

/** One claim of the broadcast lane, in due order (the one a claim always made). */
export type DueOrderClaim = (limit: number) => Promise<ClaimedDelivery[]>;

/** The fair share of the broadcast lane among projects (`DeliveryQueue.claimDeliveries`). */
export interface FairClaims {
  /**
   * Claim up to `limit` due broadcast deliveries, each project with open broadcasts served its share:
   * first `dueOrder` for the room the other projects leave, then each project that got nothing from it
   * its share from its own open broadcasts (the `(mailing_id, status)` index, one range per mailing),
   * then `dueOrder` again for what they left. With fewer than two such projects, `dueOrder` alone.
   * `notPaused` is the claim's pause condition on `d` and its parameters.
   */
  claim(
    now: number,
    until: number,
    limit: number,
    notPaused: [string, unknown[]],
    dueOrder: DueOrderClaim,
  ): Promise<ClaimedDelivery[]>;
}

/**
 * The fair claims of one SQL store. The projects come from the open broadcasts (migration 028's index
 * of mailings), never from a scan of the due deliveries: a 100,000-recipient backlog costs a claim the
 * same as ten. A mailing where nothing was due rests for {@link REST_MS} (a scheduled or backed-off
 * broadcast would otherwise cost every claim a walk over its queued rows); the due-order claim still
 * serves it, so a rest only delays fairness, never a delivery.
 */
export function sqlFairClaims(ctx: SqlContext): FairClaims {
  const { db, claims, codec } = ctx;
  const openOnly = andOpenAt(ctx.dialect, 'd');
  const resting = new Map<string, number>();
  let turn = 0;

  const openByProject = async (now: number): Promise<Map<string, string[]>> => {
    const rows = await ctx.all(
      `SELECT id, project_id, schedule_for FROM mailroom_mailings
       WHERE kind = 'broadcast' AND status IN ('queued', 'scheduled', 'sending')`,
    );
    for (const [id, until] of resting) if (until <= now) resting.delete(id);
    const byProject = new Map<string, string[]>();
    for (const row of rows) {
      const id = String(row.id);
      if (row.schedule_for !== null && Number(row.schedule_for) > now) continue;
      if (resting.has(id)) continue;
      const projectId = String(row.project_id);
      const ids = byProject.get(projectId) ?? [];
      ids.push(id);
      byProject.set(projectId, ids);
    }
    return byProject;
  };

  const fromMailing = async (
    mailingId: string,
    now: number,
    until: number,
    limit: number,
    [notPaused, pausedParams]: [string, unknown[]],
  ): Promise<ClaimedDelivery[]> => {
    const rows = (await claims.claim(db, {
      table: 'mailroom_deliveries',
      // No order: the share may be any of the mailing's due rows, so the claim is one index range.
      due: `d.mailing_id = ?${openOnly} AND d.status = 'queued' AND d.priority = 1 AND d.next_attempt_at <= ?${notPaused}`,
      dueParams: [mailingId, now, ...pausedParams],
      limit,
      mysqlIndex: 'mailroom_deliveries_mailing_status',
      set: "status = 'sending', lease_expires_at = ?, lease_token = lease_token + 1, attempts = attempts + 1, updated_at = ?",
      setParams: [until, now],
      columns: DELIVERY_COLUMNS,
      decode: codec.delivery,
      decodeValues: codec.deliveryValues,
      jsonColumns: DELIVERY_JSON_COLUMNS,
      rememberRowids: true,
    })) as ClaimedDelivery[];
    if (rows.length === 0) resting.set(mailingId, now + REST_MS);
    return rows;
  };

  return {
    async claim(now, until, limit, notPaused, dueOrder) {
      const byProject = await openByProject(now);
      if (byProject.size < 2) return dueOrder(limit);
      const projects = [...byProject.keys()].sort();
      const start = turn++ % projects.length;
      const order = [...projects.slice(start), ...projects.slice(0, start)];
      const share = Math.max(1, Math.floor(limit / projects.length));
      // The room the others' shares leave (at least one: the oldest due delivery goes first), in due
      // order: mostly the project with the oldest backlog.
      const claimed = await dueOrder(Math.max(1, limit - share * (projects.length - 1)));
      const served = new Set(claimed.map((d) => d.projectId));
      for (const projectId of order) {
        if (served.has(projectId)) continue;
        let want = Math.min(share, limit - claimed.length);
        for (const mailingId of byProject.get(projectId) ?? []) {
          if (want <= 0) break;
          const rows = await fromMailing(mailingId, now, until, want, notPaused);
          claimed.push(...rows);
          want -= rows.length;
        }
      }
      // What the shares left (a project with fewer due than its share), in due order.
      if (claimed.length < limit) claimed.push(...(await dueOrder(limit - claimed.length)));
      return claimed;
    },
  };
}
