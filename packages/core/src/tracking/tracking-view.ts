import type { BaseContext } from '../context/base-context.js';
import type { MailingRecord } from '../store/records.js';
import { linkLabel } from './tracking-links.js';
import type { TrackingView } from './tracking-options.js';

/** The open and click figures of a mailing, with its top links named by URL (people's clicks first). */
export async function trackingView(
  ctx: BaseContext,
  mailing: MailingRecord,
  limit = 10,
): Promise<TrackingView> {
  const [summary, links] = await Promise.all([
    ctx.store.trackingSummary(mailing.id),
    ctx.store.getLinkMap(mailing.id),
  ]);
  const topLinks = summary.links
    .map((link) => {
      // A link with Liquid in its href is named by its template: each recipient had their own URL.
      return { ...link, url: linkLabel(links?.[link.index] ?? '') };
    })
    .sort((a, b) => b.human - a.human || b.machine - a.machine || a.index - b.index)
    .slice(0, Math.max(0, Math.min(limit, 100)));
  return { opens: summary.opens, clicks: summary.clicks, clickTotals: summary.clickTotals, topLinks };
}
