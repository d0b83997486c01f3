import { createMailroom, type Mailroom, manualClock, workflow } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../packages/sql/test/support/databases.js';

/**
 * Automations (issue 39): two workers (two engines, each with its own store connections) on one
 * PostgreSQL database share runs whose steps fall due at the same moment: each run's message is sent by
 * exactly one of them, and every run completes.
 */

const RUNS = 300;
const HOUR = 3_600_000;

describe('two workers on PostgreSQL share due runs', () => {
  const databases = testDatabases('postgres');
  if (!databases) return;
  const clock = manualClock(new Date('2031-07-01T00:00:00.000Z'));
  const transports = [memoryTransport(), memoryTransport()];
  let engines: Mailroom[] = [];
  let secret: string;

  beforeAll(async () => {
    const url = await databases.create();
    engines = transports.map((transport) =>
      createMailroom({
        store: sqlStore({ url, poolSize: 4 }),
        transport,
        clock,
        automations: { batchSize: 20 },
      }),
    );
    const [first] = engines as [Mailroom];
    const created = await first.admin.createProject({ name: 'Shared' });
    secret = created.secret;
    await first.admin.addSender(created.project.id, { address: 'news@acme.test' });
    await first.admin.createTemplate(created.project.id, {
      ref: 'hello',
      format: 'text',
      subject: 'Hello {{ event.n }}',
      source: 'Hi',
    });
    await first.automations.create(
      secret,
      workflow('Later').on('joined').wait('1h').send({ template: 'hello', sender: 'news@acme.test' }).build(),
    );
  }, 60_000);
  afterAll(async () => {
    for (const engine of engines) await engine.close();
  });

  it(`${RUNS} runs due in the same moment: every one completes, each message once`, async () => {
    const [a, b] = engines as [Mailroom, Mailroom];
    for (let i = 0; i < RUNS; i++) {
      await (i % 2 ? a : b).track(secret, {
        event: 'joined',
        contact: `c${i}@example.test`,
        id: `j${i}`,
        properties: { n: i },
      });
    }
    await Promise.all([a.automations.runDue(), b.automations.runDue()]);
    clock.advance(HOUR);
    const [ranA, ranB] = await Promise.all([a.automations.runDue(), b.automations.runDue()]);
    expect(ranA + ranB).toBe(RUNS);
    await Promise.all([a.worker.drain(), b.worker.drain()]);
    const sent = transports.flatMap((t) => t.outbox.map((m) => `${m.to}|${m.subject}`));
    expect(sent).toHaveLength(RUNS);
    expect(new Set(sent).size).toBe(RUNS);
    // Both took a share.
    expect(Math.min(ranA, ranB)).toBeGreaterThan(0);
    const [view] = await a.automations.list(secret);
    expect(view?.runs).toEqual({ atStep: {}, active: 0, completed: RUNS, exited: 0 });
  }, 60_000);
});
