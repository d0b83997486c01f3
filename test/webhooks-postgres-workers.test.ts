import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { describe, expect, it } from 'vitest';
import { missingServerTest, testServer } from '../packages/sql/test/support/servers.js';
import { allDeliveries, seedBroadcast, startWorker, type WorkerProcess } from './support/crash-harness.js';
import { startCountingSink } from './support/crash-sink.js';
import { pgTestSchema } from './support/pg-admin.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

const SERVER = await testServer('postgres');
const RECIPIENTS = 2_000;
const LEASE_MS = 2_000;

/** The local TCP ports of the sockets process `pid` holds open (from /proc: its fds and the TCP table). */
function localPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1]) inodes.add(match[1]);
    } catch {
      // The fd closed meanwhile.
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const inode = fields[9];
      if (local && inode && inodes.has(inode)) ports.add(Number.parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

/**
 * Two worker processes (the engine's worker and its webhook sender, as `mailroom worker` runs them) on one
 * PostgreSQL database share the webhook queue: both send, one is killed mid-sending, the other sends
 * what the dead one held once its leases expire. Every event arrives, and a repeat carries the same
 * webhook-id.
 */
describe('two worker processes on PostgreSQL sharing the webhook sender', () => {
  if (SERVER.problem !== undefined) {
    missingServerTest(SERVER, 'PostgreSQL webhook workers test');
    return;
  }
  const base = SERVER.url;

  it(`deliver every email.sent of ${RECIPIENTS} recipients: none lost, repeats with the same webhook-id`, {
    timeout: 120_000,
  }, async () => {
    const { url, drop } = await pgTestSchema(base, 'mr_hooks');
    const receiver = await startWebhookReceiver();
    const sink = await startCountingSink();
    const workers: WorkerProcess[] = [];
    try {
      const seeded = await seedBroadcast(sqlStore({ url: url, poolSize: 2 }), RECIPIENTS);
      const setup = createMailroom({
        store: sqlStore({ url: url, poolSize: 2 }),
        transport: memoryTransport(),
        fetch: { allowHosts: [receiver.host] },
      });
      const [project] = await setup.store.listProjects();
      if (!project) throw new Error('no project seeded');
      const added = await setup.webhooks.add(
        { project, mode: 'live' },
        { url: receiver.url, events: ['email.sent'] },
      );
      receiver.secret = added.secret;
      await setup.close();

      const start = () =>
        startWorker(url, sink.port, {
          batchSize: 50,
          leaseMs: LEASE_MS,
          allowHosts: [receiver.host],
        });
      workers.push(await start(), await start());
      const [first, second] = workers as [WorkerProcess, WorkerProcess];
      const distinct = () => new Set(receiver.received.map((r) => r.id)).size;

      // Both send: watch which connections belong to which process (ports gathered over time, as a
      // connection may be replaced) until each has sent some events, then kill the first mid-sending.
      const firstPorts = new Set<number>();
      const secondPorts = new Set<number>();
      const from = (ports: Set<number>) => receiver.received.filter((r) => ports.has(r.remotePort)).length;
      const deadline = Date.now() + 60_000;
      while (!(from(firstPorts) > 0 && from(secondPorts) > 0 && distinct() >= RECIPIENTS / 4)) {
        if (Date.now() > deadline || distinct() >= RECIPIENTS) break;
        for (const port of localPorts(first.child.pid as number)) firstPorts.add(port);
        for (const port of localPorts(second.child.pid as number)) secondPorts.add(port);
        await new Promise((r) => setTimeout(r, 20));
      }
      const byFirst = from(firstPorts);
      const bySecond = from(secondPorts);
      first.child.kill('SIGKILL');
      expect(await first.exited).toBe('SIGKILL');
      expect(byFirst, 'requests from the first process').toBeGreaterThan(0);
      expect(bySecond, 'requests from the second process').toBeGreaterThan(0);

      // The survivor sends the rest, including what the killed one held leased.
      await receiver.waitFor(() => distinct() >= RECIPIENTS, 90_000);
      second.child.kill('SIGTERM');
      expect(await second.exited, second.stderr()).toBe('0');

      expect(receiver.received.every((r) => r.verified && r.payload.type === 'email.sent')).toBe(true);
      // One webhook-id per delivery: a repeat (a lease lost with the killed process) is the same id.
      const idsByDelivery = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const delivery = String((r.payload.data.delivery as { id?: string } | undefined)?.id);
        const ids = idsByDelivery.get(delivery) ?? new Set<string>();
        ids.add(r.id);
        idsByDelivery.set(delivery, ids);
      }
      expect(idsByDelivery.size).toBe(RECIPIENTS);
      expect([...idsByDelivery.values()].every((ids) => ids.size === 1)).toBe(true);

      const store = sqlStore({ url: url, poolSize: 2 });
      try {
        const sent = (await allDeliveries(store, seeded.mailingId)).filter((d) => d.status === 'sent');
        expect(sent).toHaveLength(RECIPIENTS);
        expect(new Set(idsByDelivery.keys())).toEqual(new Set(sent.map((d) => d.id)));
        const delivered = await store.listWebhookMessages(project.id, { status: 'delivered', limit: 10_000 });
        expect(delivered).toHaveLength(RECIPIENTS);
        expect(new Set(delivered.map((m) => m.id))).toEqual(new Set(receiver.received.map((r) => r.id)));
      } finally {
        await store.close();
      }
    } finally {
      for (const w of workers)
        if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
      await sink.close();
      await receiver.close();
      await drop();
    }
  });
});
