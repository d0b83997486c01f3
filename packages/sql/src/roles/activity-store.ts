import type { ActivityStore, EventRecord, EventSeriesRow, EventType } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import type { SqlContext } from '../sql-context.js';

/**
 * `LIKE` pattern of an address at `domain`, with the wildcards of the domain escaped by `!`; a group's
 * `name.*` becomes `name.` followed by anything.
 */
function atDomain(domain: string): string {
  const prefix = domain.endsWith('.*');
  const escaped = (prefix ? domain.slice(0, -1) : domain).replace(/[!%_]/g, (ch) => `!${ch}`);
  return `%@${escaped}${prefix ? '%' : ''}`;
}

const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);

/**
 * The SQL store's activity role: one grouped query over the events of the project in the range (index
 * `mailroom_events_time`, migration 017); buckets are computed from `created_at` (epoch milliseconds) by
 * integer arithmetic, the same in every dialect.
 */
export function sqlActivityStore(ctx: SqlContext): ActivityStore {
  const { dialect, all, guard, codec } = ctx;
  // The bounce class and the machine flag of an event's JSON `data`.
  const bounceClass = dialect.jsonText('data', ['bounce', 'class']);
  const machine = dialect.jsonIsTrue('data', ['machine']);
  const variant = `CASE WHEN type = 'email.bounced' THEN ${bounceClass} WHEN type IN ('email.opened', 'email.clicked') THEN (CASE WHEN ${machine} THEN 'machine' ELSE 'human' END) ELSE NULL END`;

  return {
    countEventSeries(projectId, query) {
      return guard('countEventSeries', async () => {
        const width = query.bucketMs;
        // Inlined in the statement (a bound parameter's type differs per driver in arithmetic): checked here.
        if (!(Number.isSafeInteger(width) && width > 0)) {
          throw new MailroomError('VALIDATION_FAILED', 'bucketMs must be a positive integer', {
            source: ctx.name,
          });
        }
        if (query.domains?.length === 0) return [];
        let where = 'project_id = ? AND created_at >= ? AND created_at < ?';
        const params: unknown[] = [projectId, query.from.getTime(), query.to.getTime()];
        if (query.mailingRef !== undefined) {
          where += ' AND mailing_ref = ?';
          params.push(query.mailingRef);
        }
        if (query.domains) {
          where += ` AND (${query.domains.map(() => `address LIKE ? ESCAPE '!'`).join(' OR ')})`;
          params.push(...query.domains.map(atDomain));
        }
        const rows = await all(
          `SELECT created_at - (created_at % ${width}) AS bucket, type, ${variant} AS variant, COUNT(*) AS n FROM mailroom_events WHERE ${where} GROUP BY 1, 2, 3`,
          params,
        );
        return rows.map(
          (row): EventSeriesRow => ({
            bucket: Number(row.bucket),
            type: row.type as EventType,
            variant: row.variant === null || row.variant === undefined ? null : String(row.variant),
            count: Number(row.n),
          }),
        );
      });
    },

    listEventsBetween(projectId, query) {
      return guard('listEventsBetween', async () => {
        if (query.types.length === 0 || query.limit <= 0) return [];
        // The range by index `mailroom_events_time` (project_id, created_at); the types are filtered on it.
        let where = `project_id = ? AND created_at >= ? AND created_at < ? AND type IN (${query.types.map(() => '?').join(', ')})`;
        const params: unknown[] = [projectId, query.from.getTime(), query.to.getTime(), ...query.types];
        if (query.mailingRef !== undefined) {
          where += ' AND mailing_ref = ?';
          params.push(query.mailingRef);
        }
        params.push(Math.floor(query.limit));
        const rows = await all(
          `SELECT id, project_id, type, mailing_ref, delivery_id, address, data, created_at FROM mailroom_events WHERE ${where} ORDER BY created_at, id LIMIT ?`,
          params,
        );
        return rows.map(
          (row): EventRecord => ({
            id: String(row.id),
            projectId: String(row.project_id),
            type: String(row.type) as EventType,
            mailingRef: text(row.mailing_ref),
            deliveryId: text(row.delivery_id),
            address: text(row.address),
            data: codec.fromJson(row.data),
            createdAt: new Date(Number(row.created_at)),
          }),
        );
      });
    },
  };
}
