import { sqlStore } from '@mailroom/sql';
import { describe, expect, it } from 'vitest';
import { allDeliveries, seedBroadcast, startWorker, summarize, type WorkerProcess } from './crash-harness.js';
import { startCountingSink } from './crash-sink.js';
import type { PostgresTarget } from './postgres-target.js';

const RECIPIENTS = 10_000;
const WORKERS = 4;

/**
 * Four `mailroom worker` processes on one PostgreSQL database, reached as `target` says: directly
 * (test/crash-postgres.test.ts) or through PgBouncer in transaction mode (test/crash-postgres-pgbouncer.test.ts).
 */
export function concurrentWorkersScenario(target: PostgresTarget): void {
  describe(`four concurrent worker processes on one PostgreSQL database (${target.via})`, () => {
    if (!target.ready) {
      target.report(`PostgreSQL crash test (${target.via})`);
      return;
    }
    const newDatabase = target.databases();

    it(`deliver a ${RECIPIENTS}-recipient broadcast exactly once: 0 lost, 0 duplicates`, {
      timeout: 300_000,
    }, async () => {
      const { url, drop } = await newDatabase('mr_crash');
      const sink = await startCountingSink();
      const workers: WorkerProcess[] = [];
      try {
        const seeded = await seedBroadcast(sqlStore({ url: url, poolSize: 2 }), RECIPIENTS);
        for (let i = 0; i < WORKERS; i++) {
          workers.push(await startWorker(url, sink.port, { batchSize: 50, leaseMs: 30_000 }));
        }
        await Promise.race([
          Promise.any(workers.map((w) => w.completed)),
          ...workers.map((w) =>
            w.exited.then((how) => {
              throw new Error(`a worker exited (${how}): ${w.stderr()}`);
            }),
          ),
        ]);
        for (const w of workers) w.child.kill('SIGTERM');
        await Promise.all(workers.map((w) => w.exited));

        const summary = summarize(sink.arrivals, seeded.addresses);
        expect(summary.lost).toEqual([]);
        expect(summary.duplicates).toBe(0);
        expect(summary.sharedIds).toBe(0);
        expect(sink.arrivals).toHaveLength(RECIPIENTS);

        const store = sqlStore({ url: url, poolSize: 2 });
        try {
          const deliveries = await allDeliveries(store, seeded.mailingId);
          expect(deliveries.filter((d) => d.status === 'sent' && d.attempts === 1)).toHaveLength(RECIPIENTS);
        } finally {
          await store.close();
        }
      } finally {
        for (const w of workers)
          if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
        await sink.close();
        await drop();
      }
    });
  });
}
