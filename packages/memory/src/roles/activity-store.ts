import type { ActivityStore, EventRecord, EventSeriesRow } from '@mailroom/core';
import type { EventState } from './event-store.js';

/** The split of an event's type into series (see `EventSeriesRow.variant`). */
function variantOf(event: EventRecord): string | null {
  if (event.type === 'email.bounced') return event.data.bounce?.class ?? null;
  if (event.type === 'email.opened' || event.type === 'email.clicked') {
    return event.data.machine === true ? 'machine' : 'human';
  }
  return null;
}

/** Whether `domain` is one of `domains`, where `name.*` matches `name.` followed by anything. */
function inDomains(domain: string, exact: ReadonlySet<string>, prefixes: readonly string[]): boolean {
  return exact.has(domain) || prefixes.some((prefix) => domain.startsWith(prefix));
}

/** `ActivityStore` in memory: a scan of the project's events. */
export function memoryActivityStore(events: () => EventState): ActivityStore {
  return {
    async countEventSeries(projectId, query) {
      const from = query.from.getTime();
      const to = query.to.getTime();
      const domains = query.domains ? new Set(query.domains.filter((d) => !d.endsWith('.*'))) : undefined;
      const prefixes = (query.domains ?? []).filter((d) => d.endsWith('.*')).map((d) => d.slice(0, -1));
      const counts = new Map<string, EventSeriesRow>();
      for (const event of events().events.values()) {
        const at = event.createdAt.getTime();
        if (event.projectId !== projectId || at < from || at >= to) continue;
        if (query.mailingRef !== undefined && event.mailingRef !== query.mailingRef) continue;
        if (domains) {
          const sign = event.address?.lastIndexOf('@') ?? -1;
          if (sign < 0 || !inDomains((event.address as string).slice(sign + 1), domains, prefixes)) continue;
        }
        const bucket = at - (at % query.bucketMs);
        const variant = variantOf(event);
        const key = `${bucket}|${event.type}|${variant ?? ''}`;
        const row = counts.get(key);
        if (row) row.count += 1;
        else counts.set(key, { bucket, type: event.type, variant, count: 1 });
      }
      return [...counts.values()];
    },

    async listEventsBetween(projectId, query) {
      const from = query.from.getTime();
      const to = query.to.getTime();
      const types = new Set(query.types);
      const out: EventRecord[] = [];
      for (const event of events().events.values()) {
        const at = event.createdAt.getTime();
        if (event.projectId !== projectId || at < from || at >= to || !types.has(event.type)) continue;
        if (query.mailingRef !== undefined && event.mailingRef !== query.mailingRef) continue;
        out.push(event);
      }
      out.sort(
        (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
      return out.slice(0, Math.max(0, query.limit));
    },
  };
}
