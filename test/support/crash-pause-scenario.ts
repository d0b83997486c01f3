import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMailroom, type Mailroom, WORKER_DEFAULTS } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { describe, expect, it, onTestFinished } from 'vitest';
import { childEntry } from './child-bundle.js';
import { allDeliveries, duplicatesPerKill, summarize } from './crash-harness.js';
import { startCountingSink } from './crash-sink.js';
import type { PostgresTarget } from './postgres-target.js';
import { sleep, waitUntil } from './wait.js';

/**
 * The scenario of test/crash-pause-postgres.test.ts (directly) and test/crash-pause-pgbouncer.test.ts.
 *
 * Issue 31, "SIGKILL a worker while a broadcast is paused and again while it resumes: 0 lost, duplicates
 * only of in-flight". Real `mailroom worker` processes (the CLI, from its sources, one process each) on a
 * PostgreSQL schema of their own, sending to a counting smtp-server sink; the test process pauses and
 * resumes through the engine API on the same database.
 *
 * 1. Worker A sends; the broadcast is paused and A is killed with SIGKILL at once, with sends in flight
 *    whose outcomes it never recorded (their claims stay leased to the dead worker).
 * 2. Worker B starts and runs past the lease of A's claims: the sink gets nothing while paused.
 * 3. Resume; B sends, and is killed with SIGKILL mid-send. Worker C starts and completes the broadcast.
 *
 * Checked: every recipient arrived (0 lost); each extra copy carries the Message-ID the store fixed for
 * that delivery; each kill repeated at most what that worker held claimed (its batch); all are `sent`.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../packages/cli/src/bin.ts', import.meta.url));
const RECIPIENTS = 1_500;
/** Messages per second per worker: slow enough that the kills land mid-send. */
const RATE = 100;
/** `mailroom worker` claims the engine's default batch: what a kill can leave behind. */
const BATCH = WORKER_DEFAULTS.batchSize;
/**
 * Their lease, `--lease 10`: the scenario waits it out twice, and the default's 60 s would make each wait
 * a minute of nothing; the property (a dead worker's claims come back after the lease, and not before) is
 * the same at any length.
 */
const LEASE_SECONDS = 10;
const LEASE_MS = LEASE_SECONDS * 1000;

/**
 * Declares the scenario on PostgreSQL reached as `target` says (directly, or through PgBouncer in
 * transaction mode: the workers open the same URL, with `pgbouncer=true`).
 */
export function crashPauseScenario(target: PostgresTarget): void {
  describe(`SIGKILL of a mailroom worker while its broadcast is paused, and again while it resumes (PostgreSQL, ${target.via})`, () => {
    if (!target.ready) {
      target.report(`PostgreSQL pause-kill test (${target.via})`);
      return;
    }
    const newDatabase = target.databases();

    it('sends nothing while paused, then delivers all: 0 lost, duplicates only of in-flight, same Message-ID', {
      timeout: 300_000,
    }, async () => {
      const { url, drop } = await newDatabase('mr_pausekill');
      const sink = await startCountingSink();
      const workers: Worker[] = [];
      let mailroom: Mailroom | undefined;
      try {
        mailroom = createMailroom({ store: sqlStore({ url, poolSize: 2 }), transport: memoryTransport() });
        const { project, secret } = await mailroom.admin.createProject({ name: 'Pause kill' });
        await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme' });
        const addresses = Array.from(
          { length: RECIPIENTS },
          (_, i) => `p${String(i).padStart(5, '0')}@example.test`,
        );
        const recipients = addresses.map((address, n) => ({ address, variables: { n } }));
        const { ref } = await mailroom.broadcast(secret, {
          subject: 'Issue {{ n }}',
          sender: 'news@acme.test',
          message: '<p>Hello, this is number {{ n }}.</p>',
          recipients: recipients.slice(0, 250),
        });
        for (let i = 250; i < RECIPIENTS; i += 250) {
          await mailroom.broadcast(secret, { broadcastRef: ref, recipients: recipients.slice(i, i + 250) });
        }
        const killedAfter: number[] = [];

        // 1. A sends; pause, and kill A with its sends in flight.
        const a = await startWorker(url, sink.port);
        workers.push(a);
        await sink.waitFor(300, 60_000);
        await mailroom.pauseBroadcast(secret, ref, { reason: 'pause-kill test' });
        a.child.kill('SIGKILL');
        expect(await a.exited, a.stderr()).toBe('SIGKILL');
        killedAfter.push(sink.arrivals.length);
        const atPause = sink.arrivals.length;
        expect(atPause).toBeLessThan(RECIPIENTS);

        // 2. B runs while paused, past the lease of A's claims: nothing is sent.
        const b = await startWorker(url, sink.port);
        workers.push(b);
        await sleep(LEASE_MS + 5_000);
        expect(sink.arrivals.length).toBe(atPause);
        expect(b.child.exitCode, b.stderr()).toBeNull();
        expect((await mailroom.getMailing(secret, ref)).status).not.toBe('completed');

        // 3. Resume; kill B mid-send; C completes.
        await mailroom.resumeBroadcast(secret, ref);
        await sink.waitFor(atPause + 300, 60_000);
        b.child.kill('SIGKILL');
        expect(await b.exited, b.stderr()).toBe('SIGKILL');
        killedAfter.push(sink.arrivals.length);
        expect(sink.arrivals.length).toBeLessThan(RECIPIENTS);
        const c = await startWorker(url, sink.port);
        workers.push(c);
        await waitUntil(
          async () => (await mailroom?.getMailing(secret, ref))?.status === 'completed',
          LEASE_MS + 120_000,
          { intervalMs: 200, what: () => c.stderr() },
        );

        const summary = summarize(sink.arrivals, addresses);
        expect(summary.lost).toEqual([]);
        expect(summary.received).toBe(RECIPIENTS);
        expect(summary.mixedIds).toEqual([]);
        expect(summary.sharedIds).toBe(0);
        const perKill = duplicatesPerKill(sink.arrivals, killedAfter);
        for (const extra of perKill) expect(extra).toBeLessThanOrEqual(BATCH);
        expect(perKill.reduce((x, y) => x + y, 0)).toBe(summary.duplicates);

        const store = sqlStore({ url, poolSize: 2 });
        try {
          const mailing = await store.getMailing(project.id, ref);
          const deliveries = await allDeliveries(store, mailing?.id ?? '');
          expect(deliveries.filter((d) => d.status === 'sent')).toHaveLength(RECIPIENTS);
          const ids = new Map(deliveries.map((d) => [d.address, d.messageId]));
          expect(sink.arrivals.filter((x) => ids.get(x.rcpt) !== x.messageId)).toEqual([]);
        } finally {
          await store.close();
        }
        console.log(
          `crash-pause-postgres (${target.via}): paused and killed after ${killedAfter[0]}, killed mid-resume after ${killedAfter[1]}; ${sink.arrivals.length} arrivals, ${summary.duplicates} duplicates (${perKill.join(', ')} per kill, bound ${BATCH})`,
        );
      } finally {
        for (const w of workers)
          if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
        await Promise.all(workers.map((w) => w.exited));
        await mailroom?.close();
        await sink.close();
        await drop();
      }
    });
  });
}

interface Worker {
  child: ChildProcess;
  exited: Promise<string>;
  stderr(): string;
}

/**
 * `mailroom worker` from the sources, in one process: bundled (child-bundle.ts), not through the tsx CLI,
 * which would run it in a child that SIGKILL of the parent leaves behind, nor `node --import tsx` (four
 * times the start-up CPU). Resolves once it prints its banner.
 */
async function startWorker(url: string, smtpPort: number): Promise<Worker> {
  const child = spawn(
    process.execPath,
    [
      await childEntry(BIN),
      'worker',
      '--database',
      url,
      '--smtp',
      `smtp://127.0.0.1:${smtpPort}`,
      '--rate',
      String(RATE),
      '--lease',
      String(LEASE_SECONDS),
      '--no-webhooks',
      '--log-level',
      'warn',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MAILROOM_DATABASE_URL: '' } },
  );
  // A test that times out before its finally leaves no worker behind.
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let err = '';
  let out = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Mailroom worker running')) resolve();
    });
    exited.then((how) => reject(new Error(`worker exited (${how}) before starting: ${err}`)));
  });
  return { child, exited, stderr: () => err };
}
