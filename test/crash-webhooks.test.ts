import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterAll, describe, expect, it } from 'vitest';
import { allDeliveries, seedBroadcast, startWorker, type WorkerProcess } from './support/crash-harness.js';
import { startCountingSink } from './support/crash-sink.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

const RECIPIENTS = 3_000;
const BATCH = 100;
const LEASE_MS = 2_000;

describe('crash safety of events: a worker killed mid-broadcast and mid-webhook-sending, then restarted', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-crash-webhooks-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loses no email.sent event; duplicates carry the same webhook-id', { timeout: 120_000 }, async () => {
    const url = `sqlite:${join(dir, 'crash.db')}`;
    const seeded = await seedBroadcast(sqlStore({ url }), RECIPIENTS);
    const receiver = await startWebhookReceiver();
    const admin = createMailroom({
      store: sqlStore({ url }),
      transport: memoryTransport(),
      fetch: { allowHosts: [receiver.host] },
    });
    const [project] = await admin.store.listProjects();
    if (!project) throw new Error('no project seeded');
    const added = await admin.webhooks.add(
      { project, mode: 'live' },
      { url: receiver.url, events: ['email.sent'] },
    );
    receiver.secret = added.secret;
    await admin.close();

    let current: WorkerProcess | undefined;
    let killAtArrivals: number | undefined = 1_000;
    const sink = await startCountingSink((count) => {
      if (killAtArrivals !== undefined && count >= killAtArrivals && current) {
        killAtArrivals = undefined;
        current.child.kill('SIGKILL');
      }
    });
    const start = () =>
      startWorker(url, sink.port, { batchSize: BATCH, leaseMs: LEASE_MS, allowHosts: [receiver.host] });
    const deliveryIds = (): Set<string> =>
      new Set(
        receiver.received.map((r) => String((r.payload.data.delivery as { id?: string } | undefined)?.id)),
      );
    try {
      // 1. Killed mid-broadcast.
      current = await start();
      expect(await current.exited, current.stderr()).toBe('SIGKILL');
      const webhooksAtFirstKill = receiver.received.length;

      // 2. Killed mid-webhook-sending: once the receiver has about half of the events.
      current = await start();
      const second = current;
      await receiver.waitFor(() => deliveryIds().size >= RECIPIENTS / 2, 60_000);
      second.child.kill('SIGKILL');
      expect(await second.exited).toBe('SIGKILL');
      const webhooksAtSecondKill = receiver.received.length;

      // 3. Restarted: everything arrives.
      current = await start();
      await receiver.waitFor(() => deliveryIds().size >= RECIPIENTS, 90_000);
      current.child.kill('SIGTERM');
      await current.exited;

      const store = sqlStore({ url });
      try {
        const sent = (await allDeliveries(store, seeded.mailingId)).filter((d) => d.status === 'sent');
        expect(sent).toHaveLength(RECIPIENTS);
        const events = await store.listEvents(project.id, { types: ['email.sent'] }, { limit: 10_000 });
        // One event per sent delivery: a resent message's crashed attempt wrote no outcome, so no event.
        expect(events).toHaveLength(RECIPIENTS);
        expect(new Set(events.map((e) => e.deliveryId)).size).toBe(RECIPIENTS);
        expect(receiver.received.every((r) => r.verified)).toBe(true);
        const idsByDelivery = new Map<string, Set<string>>();
        for (const r of receiver.received) {
          const id = String((r.payload.data.delivery as { id: string }).id);
          const set = idsByDelivery.get(id) ?? new Set<string>();
          set.add(r.id);
          idsByDelivery.set(id, set);
        }
        expect([...idsByDelivery.values()].filter((ids) => ids.size !== 1)).toEqual([]);
        expect(sent.filter((d) => !idsByDelivery.has(d.id))).toEqual([]);
        const duplicates = receiver.received.length - idsByDelivery.size;
        console.log(
          `crash-webhooks: webhooks at kills ${webhooksAtFirstKill}, ${webhooksAtSecondKill}; ${receiver.received.length} requests, ${duplicates} duplicates (same webhook-id)`,
        );
      } finally {
        await store.close();
      }
    } finally {
      if (current && current.child.exitCode === null && current.child.signalCode === null) {
        current.child.kill('SIGKILL');
      }
      await sink.close();
      await receiver.close();
    }
  });
});
