import type { EventHub } from '../context/event-hub.js';

/**
 * The members of the delivery loop's events the run worker reads (the layers keep automations from
 * importing the delivery loop; the hub is shared): a delivery's outcome, and the claim of a broadcast's
 * deliveries, which comes before the first outcome.
 */
export interface BroadcastSeen {
  delivery: (event: { kind: string }) => void;
  'broadcast:claimed': (event: { count: number }) => void;
}

/** How long after this process's last broadcast claim or outcome the run worker still yields to broadcasts. */
export const BROADCAST_QUIET_MS = 2000;
/**
 * A gap between two outcomes longer than this is the loop waiting, not its cost per delivery: the
 * measure of {@link BroadcastYield.deliveryMs} starts again after it. Outcomes come in flushes (every 50 or
 * 200 ms, `worker.flushEvery`, `worker.flushMs`), so the gaps between flushes are part of the cost.
 */
const BUSY_GAP_MS = 250;
/** The span over which outcomes are counted for {@link BroadcastYield.deliveryMs} (flushes are bursts). */
const WINDOW_MS = 500;

/** How the run worker yields to the broadcasts this process sends (`automations.shareBesideBroadcasts`). */
export interface BroadcastYield {
  /** A broadcast of this process was claimed or had an outcome within the last {@link BROADCAST_QUIET_MS}. */
  sending(): boolean;
  /**
   * The delivery loop's time per delivery while a broadcast sends (its outcomes of any kind counted over
   * half a second): the broadcast's time that each message of a run takes, as the delivery queue serves
   * single messages before a broadcast's. 0 until a first half second was counted.
   */
  deliveryMs(): number;
  /**
   * The rest after a batch of runs while a broadcast sends, so that the runs take at most the share of the
   * time: the batch's own time (`busyMs`) and the delivery loop's time for the `messages` the batch
   * accepted (they go out before the broadcast's next deliveries). 0 when no broadcast sends.
   */
  restAfter(busyMs: number, messages: number): number;
}

/**
 * Follows this process's delivery events on `events`; `share` is the run worker's share of the time
 * beside a broadcast (1: it never yields); `now` is a wall clock in milliseconds (rests are real time).
 */
export function createBroadcastYield(
  events: EventHub<BroadcastSeen>,
  share: number,
  now: () => number = Date.now,
): BroadcastYield {
  let seenAt = Number.NEGATIVE_INFINITY;
  let lastOutcomeAt = Number.NEGATIVE_INFINITY;
  let gapMs = 0;
  let windowStart = Number.NEGATIVE_INFINITY;
  let outcomes = 0;
  events.on('delivery', (event) => {
    const at = now();
    // Only while a broadcast sends is the loop busy, so that its time per outcome is its cost per delivery.
    if (at - lastOutcomeAt > BUSY_GAP_MS || at - seenAt >= BROADCAST_QUIET_MS) {
      windowStart = at;
      outcomes = 0;
    } else {
      outcomes++;
      if (at - windowStart >= WINDOW_MS) {
        gapMs = (at - windowStart) / outcomes;
        windowStart = at;
        outcomes = 0;
      }
    }
    lastOutcomeAt = at;
    if (event.kind === 'broadcast') seenAt = at;
  });
  events.on('broadcast:claimed', () => {
    seenAt = now();
  });
  const sending = () => share < 1 && now() - seenAt < BROADCAST_QUIET_MS;
  return {
    sending,
    deliveryMs: () => gapMs,
    restAfter(busyMs, messages) {
      if (!sending()) return 0;
      return ((busyMs + messages * gapMs) * (1 - share)) / share;
    },
  };
}
