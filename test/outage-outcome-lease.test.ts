/**
 * Deliveries whose outcome write fails (issue 30, item 3) are recovered by lease expiry: another
 * connection holds the SQLite file's write lock while a batch is sent to a real SMTP sink, so the worker
 * cannot record the outcomes (SQLITE_BUSY past the busy timeout: STORE_UNAVAILABLE) and the deliveries
 * stay `sending`. Once the lock is gone and the lease has expired they are claimed and sent again: at most
 * once more each, with the same Message-ID, and all end `sent`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startCountingSink } from './support/crash-sink.js';

const dir = mkdtempSync(join(tmpdir(), 'mr-outcome-lease-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an outcome write that fails', () => {
  it('leaves its deliveries leased; after the lease they are sent at most once more, with the same Message-ID', {
    timeout: 60_000,
  }, async () => {
    const file = join(dir, 'mailroom.db');
    const COUNT = 10;
    let locker: Database.Database | undefined;
    const sink = await startCountingSink((count) => {
      // The first message of the batch is on the wire: another connection takes the write lock.
      if (count === 1) {
        locker = new Database(file);
        locker.exec('BEGIN IMMEDIATE');
      }
    });
    const store = sqlStore({ url: file, busyTimeoutMs: 50 });
    const mailroom = createMailroom({
      store,
      transport: smtpTransport({ host: '127.0.0.1', port: sink.port, maxConnections: 2 }),
      worker: { leaseMs: 2000, batchSize: COUNT, pollMs: 100 },
    });
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Lease' });
      await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
      const addresses = Array.from({ length: COUNT }, (_, i) => `r${i}@example.test`);
      const { ref } = await mailroom.broadcast(secret, {
        subject: 'Hi',
        sender: 'news@acme.test',
        message: 'Hello',
        recipients: addresses,
      });
      mailroom.worker.start();
      await sink.waitFor(COUNT, 20_000);
      // The outcomes cannot be written while the lock is held (each write gives up after its retries,
      // well within this wait): the deliveries are still `sending`, their lease running out.
      await new Promise((r) => setTimeout(r, 3000));
      const held = new Database(file, { readonly: true });
      const sending = (
        held.prepare("SELECT COUNT(*) AS n FROM mailroom_deliveries WHERE status = 'sending'").get() as {
          n: number;
        }
      ).n;
      held.close();
      expect(sending).toBe(COUNT);
      locker?.exec('ROLLBACK');
      locker?.close();

      const deadline = Date.now() + 20_000;
      let view = await mailroom.getMailing(secret, ref);
      while (view.counts.sent < COUNT && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        view = await mailroom.getMailing(secret, ref);
      }
      expect(view.counts.sent).toBe(COUNT);
      expect(view.counts.sending).toBe(0);
      const byAddress = new Map<string, string[]>();
      for (const a of sink.arrivals) byAddress.set(a.rcpt, [...(byAddress.get(a.rcpt) ?? []), a.messageId]);
      expect([...byAddress.keys()].sort()).toEqual([...addresses].sort());
      for (const ids of byAddress.values()) {
        expect(ids.length).toBeLessThanOrEqual(2);
        expect(new Set(ids).size).toBe(1);
      }
      // Those whose outcome writes all failed were sent once more after their lease; a write still
      // retrying when the lock went may have recorded its outcome within the lease, sending nothing again.
      expect(sink.arrivals.length).toBeGreaterThan(COUNT);
      expect(sink.arrivals.length).toBeLessThanOrEqual(2 * COUNT);
    } finally {
      if (locker?.open) {
        if (locker.inTransaction) locker.exec('ROLLBACK');
        locker.close();
      }
      await mailroom.close();
      await sink.close();
    }
  });
});
