import type { BaseContext } from '../context/base-context.js';
import type { TrackingHit } from '../store/store.js';

/** A verified hit waiting to be written, with what the scanner rule needs. */
export interface PendingHit {
  hit: TrackingHit;
  /** When the message was rendered (from the token), epoch milliseconds. */
  sentAtMs: number;
  /** Trackable links of the mailing (clicks). */
  linkCount: number;
}

/** Options of {@link createHitRecorder}. */
export interface HitRecorderOptions {
  /** Clicks this soon after sending that cover every link of the message are a scanner's. */
  scannerWindowMs: number;
  /** Longest a hit waits before it is written (a full batch goes at once). */
  flushMs: number;
  /** Called with the hits a write reported new (first opens, every click), after it committed. */
  onRecorded(hits: TrackingHit[]): void;
  /** The events of a hit, written with it if it is new (the event outbox). */
  outboxOf(hit: TrackingHit): Promise<TrackingHit['outbox']>;
}

/** Writes hits behind the HTTP answer, in batches. */
export interface HitRecorder {
  /** Queue a verified hit; returns at once. */
  add(pending: PendingHit): void;
  /** Write everything queued now (clicks held by the scanner rule are judged as they stand). */
  flush(): Promise<void>;
  /** Flush and stop the timer. */
  close(): Promise<void>;
}

const BATCH = 200;
/** Hits kept when the store keeps failing; beyond it, the oldest are dropped (and logged). */
const MAX_QUEUED = 50_000;

interface HeldClicks {
  hits: TrackingHit[];
  links: Set<number>;
  linkCount: number;
  releaseAt: number;
}

/**
 * The in-process buffer between a tracking answer and the store: the 302 or the GIF goes out once the
 * token is verified, and the hit is written within `flushMs` in a batch (one transaction). Clicks that
 * arrive within `scannerWindowMs` of sending are held per delivery until the window closes: if by then
 * (or sooner) they cover every link of the message, they are all a scanner's (`machine: true`). A crash
 * loses the hits of the last `flushMs` at most; the redirect itself never depends on the store.
 */
export function createHitRecorder(ctx: BaseContext, options: HitRecorderOptions): HitRecorder {
  const { store, clock, logger } = ctx;
  let ready: TrackingHit[] = [];
  const held = new Map<string, HeldClicks>();
  /** Deliveries judged scanned, until their window closes: their later early clicks are the scanner's too. */
  const scanned = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  /** After a failed write, the next waits longer (doubling up to a minute), so a store outage is not flooded. */
  let backoffMs = 0;

  const schedule = () => {
    if (timer || (ready.length === 0 && held.size === 0)) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        void flush();
      },
      Math.max(options.flushMs, backoffMs),
    );
    timer.unref();
  };

  const release = (now: number, all: boolean) => {
    for (const [deliveryId, until] of scanned) if (until <= now) scanned.delete(deliveryId);
    for (const [deliveryId, group] of held) {
      if (!all && group.releaseAt > now) continue;
      held.delete(deliveryId);
      ready.push(...group.hits);
    }
  };

  function add({ hit, sentAtMs, linkCount }: PendingHit): void {
    const now = hit.at.getTime();
    if (hit.kind === 'click' && !hit.machine && now - sentAtMs < options.scannerWindowMs) {
      if (scanned.has(hit.deliveryId)) hit.machine = true;
    }
    if (hit.kind === 'click' && !hit.machine && now - sentAtMs < options.scannerWindowMs) {
      const group = held.get(hit.deliveryId) ?? {
        hits: [],
        links: new Set<number>(),
        linkCount,
        releaseAt: sentAtMs + options.scannerWindowMs,
      };
      held.set(hit.deliveryId, group);
      group.hits.push(hit);
      group.links.add(hit.linkIndex ?? 0);
      if (group.links.size >= group.linkCount) {
        for (const h of group.hits) h.machine = true;
        held.delete(hit.deliveryId);
        scanned.set(hit.deliveryId, group.releaseAt);
        ready.push(...group.hits);
      }
    } else {
      ready.push(hit);
    }
    if (ready.length >= BATCH) void flush();
    else schedule();
  }

  function flush(all = false): Promise<void> {
    writing = writing.then(async () => {
      release(clock.now().getTime(), all);
      while (ready.length > 0) {
        const batch = ready.slice(0, BATCH);
        try {
          const withEvents = await Promise.all(
            batch.map(async (hit) => ({ ...hit, outbox: await options.outboxOf(hit) })),
          );
          const fresh = await store.recordTrackingHits(withEvents);
          backoffMs = 0;
          ready = ready.slice(batch.length);
          options.onRecorded(batch.filter((_, i) => fresh[i]));
        } catch (error) {
          backoffMs = Math.min(60_000, Math.max(options.flushMs, backoffMs * 2));
          logger.error({ err: error, hits: ready.length, retryInMs: backoffMs }, 'tracking hits not written');
          if (ready.length > MAX_QUEUED) {
            logger.error({ dropped: ready.length - MAX_QUEUED }, 'tracking hits dropped');
            ready = ready.slice(ready.length - MAX_QUEUED);
          }
          break;
        }
      }
      schedule();
    });
    return writing;
  }

  return {
    add,
    flush: () => flush(true),
    async close() {
      await flush(true);
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
