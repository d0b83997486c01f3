import type { DeliveryTracking, TrackingStore, TrackingSummary } from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { Row } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';
import { writeOutbox } from './event-store.js';

/**
 * The tracking role of the SQL store (tables of migration `003_tracking`): link maps as one JSON text per
 * mailing, opens as one row per (delivery, machine) with a count, clicks as one row each.
 */
export function sqlTrackingStore({ dialect, db, runner, codec, guard }: SqlContext): TrackingStore {
  const { insertIgnore } = dialect;
  const rows = async (text: string, params: unknown[], on: Db = db): Promise<Row[]> =>
    (await runner.run<Row>(on, text, params)).rows;
  const getLinkMap = async (mailingId: string): Promise<string[] | undefined> => {
    const [row] = await rows('SELECT links FROM mailroom_tracking_links WHERE mailing_id = ?', [mailingId]);
    return row ? (JSON.parse(String(row.links)) as string[]) : undefined;
  };

  return {
    saveLinkMap(mailingId, links, now) {
      return guard('saveLinkMap', async () => {
        await runner.run(
          db,
          insertIgnore('mailroom_tracking_links', 'mailing_id, links, created_at', '(?, ?, ?)', 'mailing_id'),
          [mailingId, JSON.stringify(links), now.getTime()],
        );
        // Link maps are never changed: whoever inserted first, this reads the map that stays.
        return (await getLinkMap(mailingId)) ?? [...links];
      });
    },

    getLinkMap(mailingId) {
      return guard('getLinkMap', () => getLinkMap(mailingId));
    },

    recordTrackingHits(hits) {
      if (hits.length === 0) return Promise.resolve([]);
      return guard('recordTrackingHits', () =>
        runner.transaction(db, async (tx) => {
          const fresh: boolean[] = [];
          const outboxes: Array<(typeof hits)[number]['outbox']> = [];
          for (const hit of hits) {
            const at = hit.at.getTime();
            const machine = hit.machine ? 1 : 0;
            if (hit.kind === 'click') {
              await runner.run(
                tx,
                'INSERT INTO mailroom_tracking_clicks (id, project_id, mailing_id, delivery_id, link_index, url, machine, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
                [
                  hit.id,
                  hit.projectId,
                  hit.mailingId,
                  hit.deliveryId,
                  hit.linkIndex ?? 0,
                  hit.url ?? '',
                  machine,
                  at,
                ],
              );
              fresh.push(true);
              outboxes.push(hit.outbox);
              continue;
            }
            // The unique key decides which of racing first opens is new; the others count as repeats.
            const inserted = await runner.run(
              tx,
              insertIgnore(
                'mailroom_tracking_opens',
                'delivery_id, machine, project_id, mailing_id, first_at, last_at, hits',
                '(?, ?, ?, ?, ?, ?, 1)',
                'delivery_id, machine',
              ),
              [hit.deliveryId, machine, hit.projectId, hit.mailingId, at, at],
            );
            if (inserted.affected > 0) {
              fresh.push(true);
              outboxes.push(hit.outbox);
              continue;
            }
            await runner.run(
              tx,
              `UPDATE mailroom_tracking_opens SET hits = hits + 1, last_at = ${dialect.greatest('last_at', '?')} WHERE delivery_id = ? AND machine = ?`,
              [at, hit.deliveryId, machine],
            );
            fresh.push(false);
          }
          // The events of the new hits, in the same transaction.
          await writeOutbox(runner, codec, tx, outboxes);
          return fresh;
        }),
      );
    },

    trackingSummary(mailingId) {
      return guard('trackingSummary', async () => {
        const summary: TrackingSummary = {
          opens: { human: 0, machine: 0 },
          clicks: { human: 0, machine: 0 },
          clickTotals: { human: 0, machine: 0 },
          links: [],
        };
        const cls = (row: Row) => (Number(row.machine) !== 0 ? 'machine' : 'human');
        for (const row of await rows(
          'SELECT machine, COUNT(*) AS n FROM mailroom_tracking_opens WHERE mailing_id = ? GROUP BY machine',
          [mailingId],
        )) {
          summary.opens[cls(row)] = Number(row.n);
        }
        for (const row of await rows(
          'SELECT machine, COUNT(DISTINCT delivery_id) AS u, COUNT(*) AS n FROM mailroom_tracking_clicks WHERE mailing_id = ? GROUP BY machine',
          [mailingId],
        )) {
          summary.clicks[cls(row)] = Number(row.u);
          summary.clickTotals[cls(row)] = Number(row.n);
        }
        const links = new Map<number, { index: number; human: number; machine: number }>();
        for (const row of await rows(
          'SELECT link_index, machine, COUNT(DISTINCT delivery_id) AS u FROM mailroom_tracking_clicks WHERE mailing_id = ? GROUP BY link_index, machine',
          [mailingId],
        )) {
          const index = Number(row.link_index);
          const link = links.get(index) ?? { index, human: 0, machine: 0 };
          links.set(index, link);
          link[cls(row)] = Number(row.u);
        }
        summary.links = [...links.values()].sort((a, b) => a.index - b.index);
        return summary;
      });
    },

    deliveryTracking(deliveryId) {
      return guard('deliveryTracking', async () => {
        const result: DeliveryTracking = { opens: [], clicks: [] };
        for (const row of await rows(
          'SELECT machine, first_at, last_at, hits FROM mailroom_tracking_opens WHERE delivery_id = ? ORDER BY machine',
          [deliveryId],
        )) {
          result.opens.push({
            machine: Number(row.machine) !== 0,
            firstAt: new Date(Number(row.first_at)),
            lastAt: new Date(Number(row.last_at)),
            count: Number(row.hits),
          });
        }
        for (const row of await rows(
          'SELECT link_index, url, machine, at FROM mailroom_tracking_clicks WHERE delivery_id = ? ORDER BY at, id LIMIT 100',
          [deliveryId],
        )) {
          result.clicks.push({
            linkIndex: Number(row.link_index),
            url: String(row.url),
            machine: Number(row.machine) !== 0,
            at: new Date(Number(row.at)),
          });
        }
        return result;
      });
    },
  };
}
