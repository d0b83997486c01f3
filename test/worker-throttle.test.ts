import { MailroomError } from '@mailroom/core';
import { describe, expect, it } from 'vitest';
import { failureOutcome, isSlowDown, retryDelay } from '../packages/core/src/delivery/retry-policy.js';
import { createSendGate } from '../packages/core/src/delivery/send-gate.js';
import { createSendRateLimiter } from '../packages/core/src/delivery/send-rate-limiter.js';
import { maxInWindow } from './support/crash-sink.js';

/** Resolves after the pending microtasks and timers due now. */
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('send gate: 421/454 halve the concurrency and pause, successes bring it back', () => {
  it('halves, pauses, then recovers one place per run of successes', async () => {
    let now = 0;
    const gate = createSendGate({ concurrency: 4, pauseMs: 1_000, now: () => now });
    const releases = await Promise.all([gate.acquire(), gate.acquire(), gate.acquire(), gate.acquire()]);
    let fifth = false;
    void gate.acquire().then(() => {
      fifth = true;
    });
    await tick();
    expect(fifth).toBe(false);

    releases[0]?.('slow-down');
    expect(gate.limit).toBe(2);
    await tick();
    // Paused: nothing starts, even with places free.
    expect(fifth).toBe(false);
    releases[1]?.('ok');
    releases[2]?.('ok');
    releases[3]?.('ok');
    await tick();
    expect(fifth).toBe(false);
    now = 1_001;
    await new Promise((r) => setTimeout(r, 1_050));
    expect(fifth).toBe(true);
    expect(gate.active).toBe(1);
  });

  it('climbs back to the configured concurrency, never beyond', async () => {
    const gate = createSendGate({ concurrency: 4, pauseMs: 0 });
    (await gate.acquire())('slow-down');
    (await gate.acquire())('slow-down');
    expect(gate.limit).toBe(1);
    for (let i = 0; i < 20; i++) (await gate.acquire())('ok');
    expect(gate.limit).toBe(4);
  });

  it('a 421 or 454 reply asks for a slow-down; other failures do not', () => {
    const reply = (responseCode: number) => new MailroomError('TRANSPORT_TRANSIENT', 'x', { responseCode });
    expect(isSlowDown(reply(421))).toBe(true);
    expect(isSlowDown(reply(454))).toBe(true);
    expect(isSlowDown(reply(451))).toBe(false);
    expect(isSlowDown(new Error('ECONNRESET'))).toBe(false);
  });
});

describe('rate limiter', () => {
  it('no one-second window of arrivals holds more than the limit, whatever the send latency', async () => {
    let now = 0;
    const limiter = createSendRateLimiter(10, () => now);
    const arrivals: number[] = [];
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    // 40 sends at once; each arrives somewhere within its latency (0-300 ms) and settles 0-100 ms later.
    const sends = Array.from({ length: 40 }, async () => {
      const release = await limiter.acquire();
      const arrive = now + random() * 300;
      const settle = arrive + random() * 100;
      arrivals.push(arrive);
      while (now < settle) await new Promise((r) => setTimeout(r, 0));
      release();
    });
    // A simulated clock, advanced in 5 ms steps while sends are pending.
    let done = false;
    void Promise.all(sends).then(() => {
      done = true;
    });
    while (!done) {
      now += 5;
      await new Promise((r) => setTimeout(r, 0));
    }
    expect(arrivals).toHaveLength(40);
    expect(maxInWindow(arrivals)).toBeLessThanOrEqual(10);
  });

  it('0 means unlimited', async () => {
    const limiter = createSendRateLimiter(0);
    const all = await Promise.all(Array.from({ length: 1000 }, () => limiter.acquire()));
    expect(all).toHaveLength(1000);
  });
});

describe('retry policy', () => {
  const settings = { maxAttempts: 3, maxAgeMs: 60_000, retryBaseMs: 1_000, retryMaxMs: 8_000 };
  const since = new Date('2030-01-01T00:00:00Z');
  const at = (ms: number) => new Date(since.getTime() + ms);
  const transient = new MailroomError('TRANSPORT_TRANSIENT', '451 later', {
    responseCode: 451,
    response: '451 4.3.0 later',
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(retryDelay(1, 1_000, 8_000, () => 0)).toBe(500);
    expect(retryDelay(1, 1_000, 8_000, () => 1)).toBe(1_000);
    expect(retryDelay(3, 1_000, 8_000, () => 1)).toBe(4_000);
    expect(retryDelay(10, 1_000, 8_000, () => 1)).toBe(8_000);
  });

  it('retries a transient failure, keeps the reply, and fails after maxAttempts', () => {
    const retry = failureOutcome({ attempts: 1 }, transient, settings, since, at(0), () => 1);
    expect(retry).toMatchObject({
      status: 'queued',
      lastResponse: '451 4.3.0 later',
      nextAttemptAt: at(1_000),
    });
    expect(failureOutcome({ attempts: 3 }, transient, settings, since, at(0)).status).toBe('failed');
  });

  it('never schedules a retry past maxAgeMs', () => {
    const late = failureOutcome({ attempts: 2 }, transient, settings, since, at(59_500), () => 1);
    expect(late.status).toBe('failed');
    expect(late.lastError).toMatch(/older than 60000 ms/);
  });

  it('a permanent failure is final at once', () => {
    const permanent = new MailroomError('TRANSPORT_PERMANENT', '550', {
      responseCode: 550,
      response: '550 no',
    });
    expect(failureOutcome({ attempts: 1 }, permanent, settings, since, at(0))).toMatchObject({
      status: 'failed',
      lastResponse: '550 no',
    });
  });
});
