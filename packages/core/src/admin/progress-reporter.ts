import type { BaseContext } from '../context/base-context.js';
import type { DeliveryEvents } from '../delivery/delivery-events.js';
import { TERMINAL_DELIVERY_STATUSES } from '../store/records.js';
import type { MailingStore } from '../store/store.js';
import type { ProgressEvents } from './admin-events.js';
import type { MailingProgress } from './engine-views.js';

/** Default of `MailroomOptions.progressIntervalMs`. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 1_000;

/** Mailings followed at once; past it the oldest is forgotten (it then reports again on its next outcome). */
const MAX_TRACKED = 10_000;

interface Tracked {
  projectId: string;
  ref: string;
  /** `performance.now()` of the last emission. */
  lastAt: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The mailing completed: the next emission is its last. */
  final: boolean;
}

/** The `broadcast:progress` emitter of one engine. */
export interface ProgressReporter {
  /** Cancel pending emissions and stop following outcomes. */
  stop(): void;
}

/**
 * Emits `broadcast:progress` (a mailing's counts) from this process's delivery outcomes: at most once per
 * `intervalMs` per mailing, the first outcome after a quiet spell at once and later ones folded into one
 * trailing emission, so a listener always ends on the counts at completion. It follows `delivery` events
 * only once something listens to `broadcast:progress`: an engine nobody watches pays nothing.
 */
export function createProgressReporter(ctx: BaseContext, intervalMs: number): ProgressReporter {
  const { logger } = ctx;
  const events = ctx.events.view<ProgressEvents & DeliveryEvents>();
  const store: MailingStore = ctx.store;
  const tracked = new Map<string, Tracked>();
  const unsubscribe: Array<() => void> = [];
  let stopped = false;

  function touch(projectId: string, ref: string, final: boolean): void {
    if (stopped) return;
    const key = `${projectId}\n${ref}`;
    let entry = tracked.get(key);
    if (!entry) {
      if (tracked.size >= MAX_TRACKED) forget(tracked.keys().next().value as string);
      entry = { projectId, ref, lastAt: Number.NEGATIVE_INFINITY, timer: undefined, final: false };
      tracked.set(key, entry);
    }
    entry.final ||= final;
    if (entry.timer) return;
    const wait = entry.lastAt + intervalMs - performance.now();
    if (wait <= 0) {
      void emit(key, entry);
      return;
    }
    const pending = entry;
    entry.timer = setTimeout(() => {
      pending.timer = undefined;
      void emit(key, pending);
    }, wait);
    // A pending report must not keep a process alive that has nothing else to do.
    entry.timer.unref?.();
  }

  function forget(key: string): void {
    const entry = tracked.get(key);
    if (entry?.timer) clearTimeout(entry.timer);
    tracked.delete(key);
  }

  async function emit(key: string, entry: Tracked): Promise<void> {
    entry.lastAt = performance.now();
    if (entry.final) tracked.delete(key);
    try {
      const mailing = await store.getMailing(entry.projectId, entry.ref);
      if (!mailing || stopped) return;
      const counts = await store.countDeliveries(mailing.id);
      let total = 0;
      for (const n of Object.values(counts)) total += n;
      const done = TERMINAL_DELIVERY_STATUSES.reduce((sum, status) => sum + counts[status], 0);
      const progress: MailingProgress = {
        projectId: mailing.projectId,
        ref: mailing.ref,
        kind: mailing.kind,
        status: mailing.status,
        counts,
        total,
        done,
      };
      events.emit('broadcast:progress', progress);
    } catch (error) {
      logger.warn({ err: error, ref: entry.ref }, 'reading progress failed');
    }
  }

  events.onFirstListener('broadcast:progress', () => {
    if (stopped) return;
    unsubscribe.push(
      events.on('delivery', (event) => touch(event.projectId, event.mailingRef, false)),
      events.on('broadcast:completed', (event) => touch(event.projectId, event.ref, true)),
    );
  });

  return {
    stop() {
      stopped = true;
      for (const off of unsubscribe.splice(0)) off();
      for (const key of [...tracked.keys()]) forget(key);
    },
  };
}
