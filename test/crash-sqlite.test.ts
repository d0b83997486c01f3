import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKER_DEFAULTS } from '@mailroom/core';
import { sqlStore } from '@mailroom/sql';
import { afterAll, describe, expect, it } from 'vitest';
import {
  allDeliveries,
  duplicatesPerKill,
  seedBroadcast,
  startWorker,
  summarize,
  type WorkerProcess,
} from './support/crash-harness.js';
import { startCountingSink } from './support/crash-sink.js';

const RECIPIENTS = 10_000;
/**
 * The default batch size: the most deliveries a worker holds claimed without a durable outcome, and so the
 * most a crash of it can send twice (the README states this bound).
 */
const BATCH = WORKER_DEFAULTS.batchSize;
const LEASE_MS = 2_000;
const KILL_AT = [1_000, 5_000, 9_000];

describe('crash safety on SQLite: a worker killed with SIGKILL mid-broadcast, then restarted', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-crash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`kills the worker at ~${KILL_AT.join(', ~')} arrivals: 0 lost, duplicates only of in-flight deliveries, same Message-ID`, {
    timeout: 300_000,
  }, async () => {
    const url = `sqlite:${join(dir, 'crash.db')}`;
    const seeded = await seedBroadcast(sqlStore({ url }), RECIPIENTS);

    let current: WorkerProcess | undefined;
    let killAt: number | undefined;
    const sink = await startCountingSink((count) => {
      if (killAt !== undefined && count >= killAt && current) {
        killAt = undefined;
        current.child.kill('SIGKILL');
      }
    });
    try {
      const killedAfter: number[] = [];
      for (const threshold of KILL_AT) {
        killAt = threshold;
        current = await startWorker(url, sink.port, { batchSize: BATCH, leaseMs: LEASE_MS });
        const how = await current.exited;
        expect(how, current.stderr()).toBe('SIGKILL');
        killedAfter.push(sink.arrivals.length);
      }
      current = await startWorker(url, sink.port, { batchSize: BATCH, leaseMs: LEASE_MS });
      await Promise.race([
        current.completed,
        current.exited.then((how) => {
          throw new Error(`last worker exited (${how}): ${current?.stderr()}`);
        }),
      ]);
      current.child.kill('SIGTERM');
      await current.exited;

      const summary = summarize(sink.arrivals, seeded.addresses);
      expect(summary.lost).toEqual([]);
      expect(summary.received).toBe(RECIPIENTS);
      expect(summary.mixedIds).toEqual([]);
      expect(summary.sharedIds).toBe(0);
      // Each kill can resend at most what that worker had claimed and not yet recorded: its batch.
      const perKill = duplicatesPerKill(sink.arrivals, killedAfter);
      expect(perKill).toHaveLength(KILL_AT.length);
      for (const extra of perKill) expect(extra).toBeLessThanOrEqual(BATCH);
      expect(perKill.reduce((a, b) => a + b, 0)).toBe(summary.duplicates);
      expect(killedAfter.every((n, i) => n >= (KILL_AT[i] as number))).toBe(true);

      const store = sqlStore({ url });
      try {
        const deliveries = await allDeliveries(store, seeded.mailingId);
        expect(deliveries.filter((d) => d.status === 'sent')).toHaveLength(RECIPIENTS);
        // What the sink got carries the Message-ID the store fixed for that delivery.
        const ids = new Map(deliveries.map((d) => [d.address, d.messageId]));
        expect(sink.arrivals.filter((a) => ids.get(a.rcpt) !== a.messageId)).toEqual([]);
        console.log(
          `crash-sqlite: kills after ${killedAfter.join(', ')} arrivals; ${sink.arrivals.length} arrivals, ${summary.duplicates} duplicates (${perKill.join(', ')} per kill, bound ${BATCH})`,
        );
      } finally {
        await store.close();
      }
    } finally {
      if (current && current.child.exitCode === null && current.child.signalCode === null)
        current.child.kill('SIGKILL');
      await sink.close();
    }
  });

  it('the README states this bound, with the default batch size, and the same Message-ID', () => {
    const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
    const section = /### Delivery guarantee\n([\s\S]*?)\n###? /.exec(readme)?.[1] ?? '';
    expect(section, 'README: a "### Delivery guarantee" section').not.toBe('');
    expect(section).toContain(`at most ${BATCH} deliveries`);
    expect(section).toContain('`batchSize`');
    expect(section).toContain('same Message-ID');
  });
});
