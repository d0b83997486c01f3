import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BUSY_WINDOW_MS, createBusyPacer } from '../src/webhooks/busy-pacer.js';

/** Takes turns one after another, as sending places do, until stopped; counts them and when they came. */
function taker(pacer: ReturnType<typeof createBusyPacer>) {
  const at: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const wait = pacer.turn();
      if (wait) await wait;
      else await Promise.resolve();
      if (stopped) break;
      at.push(performance.now());
    }
  })();
  return {
    at,
    async stop() {
      stopped = true;
      await vi.advanceTimersByTimeAsync(100);
      await loop;
    },
  };
}

describe('the busy pacer of the webhook sender', () => {
  let active = true;
  beforeEach(() => {
    active = true;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
  });
  afterEach(() => {
    active = false;
    vi.useRealTimers();
  });

  it.each([
    [100, 1000],
    [3, 30],
    [1, 10],
    [0.5, 5],
  ])('at %s per second grants %s turns in 10 s while busy, in bursts per window', async (rate, expected) => {
    const pacer = createBusyPacer(
      rate,
      () => true,
      () => active,
    );
    const t = taker(pacer);
    await vi.advanceTimersByTimeAsync(10_000 - 1);
    const count = t.at.length;
    active = false;
    await t.stop();
    expect(count).toBeGreaterThanOrEqual(expected - 1);
    expect(count).toBeLessThanOrEqual(expected);
    // A window's worth at once (at least one turn): all in the first window, none more until the next.
    const first = t.at.filter((time) => time < BUSY_WINDOW_MS).length;
    expect(first).toBe(Math.floor(Math.max(1, (rate * BUSY_WINDOW_MS) / 1000)));
    expect(t.at.filter((time) => time < BUSY_WINDOW_MS).every((time) => time === t.at[0])).toBe(true);
  });

  it('makes no one wait while the worker is not busy, and lifts the cap soon after it stops being busy', async () => {
    let busy = false;
    const pacer = createBusyPacer(
      1,
      () => busy,
      () => active,
    );
    expect(pacer.turn()).toBeUndefined();
    busy = true;
    await pacer.turn(); // the first window's turn
    let second = false;
    void pacer.turn()?.then(() => {
      second = true;
    });
    await vi.advanceTimersByTimeAsync(200);
    expect(second).toBe(false);
    busy = false;
    await vi.advanceTimersByTimeAsync(60);
    expect(second).toBe(true);
  });
});
