import { createMailroom, type Mailroom, workflow } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../packages/sql/test/support/databases.js';
import { startWorker, type WorkerProcess } from './support/crash-harness.js';
import { type CountingSink, startCountingSink } from './support/crash-sink.js';

/**
 * Automations (issue 39) survive SIGKILL at the scale: two worker processes on one PostgreSQL
 * database share RUNS runs (10,000 at the scale) whose timers are due when the workers start (tracked before, each waiting
 * 2 s); three times a worker is killed mid-work and another started. Every run completes,
 * and each contact gets one message: a delivery in flight may be sent again with the same Message-ID
 * (invariant 3), but no step ever makes a second message (a send step's message has a ref derived from
 * the run and the step, which the store writes once, however its earlier attempt died).
 */

/**
 * The scale is 10,000 (`MAILROOM_CRASH_RUNS=10000`: about 250 s beside the rest of the suite, its
 * longest file); the suite runs 2,000, the same property at a fifth of the time (it was 600).
 */
const RUNS = Number(process.env.MAILROOM_CRASH_RUNS) || 2_000;
/** Short, so that the runs and deliveries of a killed worker come back soon; longer than a batch takes. */
const LEASE_MS = 4000;
/** Concurrent `track` calls while seeding (the engine's pool has 8 connections). */
const SEED_CONCURRENCY = 16;

describe('automation runs on PostgreSQL under SIGKILL', () => {
  const databases = testDatabases('postgres');
  if (!databases) return;
  let url: string;
  let sink: CountingSink;
  let engine: Mailroom;
  let secret: string;
  const workers: WorkerProcess[] = [];
  const kills: number[] = [RUNS / 6, RUNS / 3, RUNS / 2];

  beforeAll(async () => {
    url = await databases.create();
    // The test's own engine only tracks events and reads; the worker processes send.
    engine = createMailroom({ store: sqlStore({ url, poolSize: 8 }), transport: memoryTransport() });
    const created = await engine.admin.createProject({ name: 'Crash' });
    secret = created.secret;
    await engine.admin.addSender(created.project.id, { address: 'news@acme.test' });
    await engine.admin.createTemplate(created.project.id, {
      ref: 'hello',
      format: 'text',
      subject: 'Hello {{ event.n }}',
      source: 'Hi',
    });
    await engine.automations.create(
      secret,
      workflow('Soon').on('joined').wait('2s').send({ template: 'hello', sender: 'news@acme.test' }).build(),
    );
    // The runs' timers (2 s after their start) are due by the time the workers start, the last ones within
    // 2 s of it, however long the seeding took on a loaded machine: the workers meet every due step at once.
    let next = 0;
    const seeder = async () => {
      for (let i = next++; i < RUNS; i = next++) {
        await engine.track(secret, {
          event: 'joined',
          contact: `c${i}@example.test`,
          id: `j${i}`,
          properties: { n: i },
        });
      }
    };
    await Promise.all(Array.from({ length: SEED_CONCURRENCY }, seeder));
  }, 180_000);

  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await engine?.close();
    await sink?.close();
  });

  it(`${RUNS} runs due together, a worker SIGKILLed three times: all complete, one message per contact`, async () => {
    const start = () => startWorker(url, sink.port, { batchSize: 50, leaseMs: LEASE_MS, automations: true });
    sink = await startCountingSink((count) => {
      if (count < (kills[0] ?? Number.POSITIVE_INFINITY)) return;
      kills.shift();
      const victim = workers.find((w) => w.child.exitCode === null && w.child.signalCode === null);
      victim?.child.kill('SIGKILL');
      void start().then((w) => workers.push(w));
    });
    workers.push(await start(), await start());
    // Deliveries in flight when a worker died arrive twice: wait for every contact, not a count.
    const distinct = () => new Set(sink.arrivals.map((a) => a.rcpt)).size;
    const until = Date.now() + 300_000;
    while (distinct() < RUNS && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const byContact = new Map<string, Set<string>>();
    for (const a of sink.arrivals) {
      const ids = byContact.get(a.rcpt) ?? new Set<string>();
      ids.add(a.messageId);
      byContact.set(a.rcpt, ids);
    }
    expect(byContact.size).toBe(RUNS);
    expect([...byContact.values()].filter((ids) => ids.size > 1)).toEqual([]);
    expect(kills).toEqual([]);
    // Every run ends completed (the last ones once their lease lapses after a kill).
    const [view] = await engine.automations.list(secret);
    const deadline = Date.now() + 60_000;
    let counts = view?.runs;
    while (counts?.completed !== RUNS && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      counts = (await engine.automations.list(secret))[0]?.runs;
    }
    expect(counts).toEqual({ atStep: {}, active: 0, completed: RUNS, exited: 0 });
  }, 420_000);
});
