/**
 * The pauses of a chart's period, as bands on its time axis: read from the `broadcast.paused` and
 * `broadcast.resumed` events (the store removes a pause when it is resumed, so the events are its history),
 * with the pauses in force now for those that began before the period.
 */
import type { EventRecord, PauseEventData } from '../store/event-records.js';
import type { PauseRule, PauseScope } from '../store/pause-store.js';

/** One pause over a chart's period. */
export interface PauseBand {
  scope: PauseScope;
  /** The broadcast's ref, the project's id, or the destination's name. */
  target: string;
  /** `destination`: the recipient domains held back. */
  domains: string[];
  /** Who paused: an operator or the reputation guard; null when it began before the period and ended in it. */
  by: 'operator' | 'guard' | null;
  reason: string | null;
  /** The guard's rule and its figures; null for an operator's pause. */
  rule: PauseRule | null;
  /** When it began; the period's start when it began before (`startedBefore`). */
  from: Date;
  startedBefore: boolean;
  /** When it ended (resumed, or its timed end); null: in force at the period's end. */
  to: Date | null;
  /** How it ended: resumed by an operator or the guard, `timed` (its `until` passed), or null (in force). */
  ended: 'operator' | 'guard' | 'timed' | null;
}

/** A pause in force now, as the chart needs it (see `PauseView`). */
export interface ActivePause {
  scope: PauseScope;
  target: string;
  domains: string[];
  by: 'operator' | 'guard';
  reason: string | null;
  rule: PauseRule | null;
  createdAt: Date;
  until: Date | null;
}

/**
 * The bands of `events` (pause events of the period, earliest first) over `[from, to)`, with the pauses
 * `active` now that began before `from`. Bands are ordered by start.
 */
export function pauseBands(
  events: readonly EventRecord[],
  active: readonly ActivePause[],
  from: Date,
  to: Date,
): PauseBand[] {
  const bands: PauseBand[] = [];
  /** The pauses running after the events read so far, with their timed end. */
  const open = new Map<string, { band: PauseBand; until: Date | null }>();
  const keyOf = (p: { scope: string; target: string }) => `${p.scope}|${p.target}`;
  for (const event of events) {
    const data: PauseEventData | undefined = event.data.pause;
    if (!data) continue;
    const key = keyOf(data);
    let running = open.get(key);
    // A timed pause that ended by itself writes no event: it ended at its `until`.
    if (running?.until && running.until.getTime() <= event.createdAt.getTime()) {
      running.band.to = running.until;
      running.band.ended = 'timed';
      open.delete(key);
      running = undefined;
    }
    if (event.type === 'broadcast.paused') {
      if (running) continue;
      const band: PauseBand = {
        scope: data.scope,
        target: data.target,
        domains: data.domains ?? [],
        by: data.by,
        reason: data.reason,
        rule: data.rule ?? null,
        from: event.createdAt,
        startedBefore: false,
        to: null,
        ended: null,
      };
      bands.push(band);
      open.set(key, { band, until: data.until ? new Date(data.until) : null });
    } else if (event.type === 'broadcast.resumed') {
      if (running) {
        running.band.to = event.createdAt;
        running.band.ended = data.by;
        open.delete(key);
      } else if (!bands.some((b) => keyOf(b) === key)) {
        // Paused before the period, resumed in it.
        bands.push({
          scope: data.scope,
          target: data.target,
          domains: data.domains ?? [],
          by: null,
          reason: null,
          rule: null,
          from,
          startedBefore: true,
          to: event.createdAt,
          ended: data.by,
        });
      }
    }
  }
  for (const { band, until } of open.values()) {
    if (until && until.getTime() < to.getTime()) {
      band.to = until;
      band.ended = 'timed';
    }
  }
  for (const pause of active) {
    if (pause.createdAt.getTime() >= from.getTime() || open.has(keyOf(pause))) continue;
    bands.push({
      scope: pause.scope,
      target: pause.target,
      domains: pause.domains,
      by: pause.by,
      reason: pause.reason,
      rule: pause.rule,
      from,
      startedBefore: true,
      to: pause.until && pause.until.getTime() < to.getTime() ? pause.until : null,
      ended: pause.until && pause.until.getTime() < to.getTime() ? 'timed' : null,
    });
  }
  return bands.sort((a, b) => a.from.getTime() - b.from.getTime());
}

/**
 * Whether a band concerns a chart: of one broadcast (`mailingRef`), its own pauses and the project's and
 * destinations' (which hold its mail back too); of a destination (`domains`), the project's, the
 * broadcasts' and that destination's; of the whole project, every one.
 */
export function bandConcerns(
  band: PauseBand,
  chart: { mailingRef?: string; domains?: readonly string[] },
): boolean {
  if (band.scope === 'broadcast' && chart.mailingRef !== undefined) return band.target === chart.mailingRef;
  if (band.scope === 'destination' && chart.domains) {
    const matches = (domain: string) =>
      chart.domains?.some((d) => (d.endsWith('.*') ? domain.startsWith(d.slice(0, -1)) : d === domain));
    return band.domains.length === 0 ? matches(band.target) === true : band.domains.some(matches);
  }
  return true;
}
