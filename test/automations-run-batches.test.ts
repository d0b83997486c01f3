import { createMailroom, type Mailroom, manualClock, type Store, workflow } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The run worker beside a broadcast (issue 39, `bench/automation-runs.ts`): a burst of due runs starts
 * with a small batch (a batch in flight is not cut short, so a first batch of `batchSize` weighed on a
 * broadcast starting at the same moment), and a broadcast this process claims makes it claim small
 * batches from then on, before any of the broadcast's outcomes.
 */

const SENDER = 'team@acme.test';
const HOUR = 3_600_000;

describe('the run worker’s batches', () => {
  let mailroom: Mailroom | undefined;
  afterEach(async () => {
    await mailroom?.close();
    mailroom = undefined;
  });

  /** An engine whose store records the `limit` of every claim of runs; `n` runs due at once. */
  async function setUp(n: number) {
    const clock = manualClock(new Date('2031-01-01T00:00:00.000Z'));
    const inner = memoryStore();
    const limits: number[] = [];
    const reads = { workflows: 0 };
    const store: Store = {
      ...inner,
      getWorkflow: (projectId, id) => {
        reads.workflows++;
        return inner.getWorkflow(projectId, id);
      },
      claimRuns: async (options) => {
        const claimed = await inner.claimRuns(options);
        if (claimed.length > 0) limits.push(options.limit);
        return claimed;
      },
    };
    const transport = memoryTransport();
    const engine = createMailroom({
      store,
      transport,
      clock,
      automations: { batchSize: 50, pollMs: 20 },
      worker: { pollMs: 20 },
    });
    mailroom = engine;
    const { project, secret } = await engine.admin.createProject({ name: 'Acme' });
    await engine.admin.addSender(project.id, { address: SENDER });
    await engine.admin.createTemplate(project.id, {
      ref: 'hello',
      format: 'text',
      subject: 'Hello',
      source: 'Hi',
    });
    await engine.automations.create(
      secret,
      workflow('Later').on('joined').wait('1h').send({ template: 'hello', sender: SENDER }).build(),
    );
    for (let i = 0; i < n; i++) {
      await engine.track(secret, { event: 'joined', contact: `c${i}@example.test`, id: `j${i}` });
    }
    await engine.automations.runDue();
    limits.length = 0;
    reads.workflows = 0;
    clock.advance(HOUR);
    const sent = () => transport.outbox.filter((m) => m.subject === 'Hello').length;
    return { engine, secret, limits, sent, reads };
  }

  async function until(done: () => boolean): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('starts a burst of due runs with a batch of 10, doubling up to batchSize', async () => {
    const { engine, limits, sent } = await setUp(200);
    engine.worker.start();
    await until(() => sent() === 200);
    await engine.worker.stop();
    expect(limits.slice(0, 4)).toEqual([10, 20, 40, 50]);
  }, 90_000);

  it('reads a workflow once per claimed batch, not once per run', async () => {
    const { engine, limits, sent, reads } = await setUp(120);
    await engine.automations.runDue();
    await engine.worker.drain();
    expect(sent()).toBe(120);
    // runDue claims batches of 50: 50, 50, 20.
    expect(limits).toEqual([50, 50, 50]);
    expect(reads.workflows).toBe(3);
  }, 90_000);

  it('claims at most 10 runs at a time once a broadcast is claimed, before its first outcome', async () => {
    const { engine, secret, limits, sent } = await setUp(120);
    const page = (from: number) =>
      Array.from({ length: 250 }, (_, i) => ({ address: `b${from + i}@example.org` }));
    const { ref } = await engine.broadcast(secret, {
      subject: 'News',
      sender: SENDER,
      message: '<p>Hi</p>',
      recipients: page(0),
    });
    for (let from = 250; from < 2000; from += 250) {
      await engine.broadcast(secret, { broadcastRef: ref, recipients: page(from) });
    }
    engine.worker.start();
    await until(() => sent() === 120);
    await engine.worker.stop();
    // Without the broadcast: 10, 20, 40 (the test above).
    expect(limits.slice(0, 3)).toEqual([10, 10, 10]);
  }, 90_000);
});
