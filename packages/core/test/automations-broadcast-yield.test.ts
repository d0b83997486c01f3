import { describe, expect, it } from 'vitest';
import {
  BROADCAST_QUIET_MS,
  type BroadcastSeen,
  createBroadcastYield,
} from '../src/automations/broadcast-yield.js';
import { EventHub } from '../src/context/event-hub.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A hub, a yield on it with the share 0.05, and a wall clock the test moves. */
function setup() {
  let at = 1_000_000;
  const events = new EventHub<BroadcastSeen>(silent as never);
  const yielding = createBroadcastYield(events, 0.05, () => at);
  /** `count` outcomes of `kind`, one every `everyMs`, in flushes of 50 (as the delivery loop writes them). */
  const outcomes = (count: number, everyMs: number, kind = 'broadcast') => {
    for (let i = 0; i < count; i += 50) {
      at += everyMs * 50;
      for (let j = 0; j < 50 && i + j < count; j++) events.emit('delivery', { kind });
    }
  };
  return { events, yielding, outcomes, advance: (ms: number) => (at += ms) };
}

describe('the run worker yields to broadcasts (automations.shareBesideBroadcasts)', () => {
  it('rests only while a broadcast of this process sends, from its claim on', () => {
    const { events, yielding, advance } = setup();
    expect(yielding.sending()).toBe(false);
    expect(yielding.restAfter(10, 10)).toBe(0);
    events.emit('broadcast:claimed', { count: 250 });
    expect(yielding.sending()).toBe(true);
    // Busy 10 ms at a share of 5 %: the next 190 ms are the broadcast's.
    expect(yielding.restAfter(10, 0)).toBeCloseTo(190);
    advance(BROADCAST_QUIET_MS);
    expect(yielding.sending()).toBe(false);
  });

  it("counts the runs' messages in the share: each takes the delivery loop's time per delivery", () => {
    const { events, yielding, outcomes } = setup();
    events.emit('broadcast:claimed', { count: 250 });
    // The loop sends one delivery every 0.5 ms (2,000 a second), in flushes of 50.
    outcomes(2000, 0.5);
    expect(yielding.deliveryMs()).toBeCloseTo(0.5, 1);
    // A batch busy 10 ms that accepted 20 messages took 10 ms + 20 x 0.5 ms of the broadcast's time.
    expect(yielding.restAfter(10, 20)).toBeCloseTo((10 + 20 * 0.5) * 19, 0);
    expect(yielding.restAfter(10, 20)).toBeGreaterThan(yielding.restAfter(10, 0));
  });

  it('leaves out what the loop waited: a pause in outcomes starts the measure again', () => {
    const { events, yielding, outcomes, advance } = setup();
    events.emit('broadcast:claimed', { count: 250 });
    outcomes(2000, 0.5);
    advance(1000);
    events.emit('broadcast:claimed', { count: 250 });
    outcomes(4000, 0.25);
    expect(yielding.deliveryMs()).toBeCloseTo(0.25, 1);
  });

  it('never yields with a share of 1', () => {
    let at = 0;
    const events = new EventHub<BroadcastSeen>(silent as never);
    const yielding = createBroadcastYield(events, 1, () => at);
    events.emit('broadcast:claimed', { count: 250 });
    at += 1;
    expect(yielding.sending()).toBe(false);
    expect(yielding.restAfter(10, 10)).toBe(0);
  });
});
