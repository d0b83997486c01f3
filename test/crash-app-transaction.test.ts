import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMailroom } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { describe, expect, it } from 'vitest';
import { testDatabases } from '../packages/sql/test/support/databases.js';
import { type AppKind, openAppDatabase } from './support/app-database.js';
import { childEntry } from './support/child-bundle.js';
import { startCountingSink } from './support/crash-sink.js';

// An app process dies by SIGKILL right after committing an order and its receipt, and another while its
// transaction is still open. Restarted, the first receipt goes out once and the second never.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHILD = fileURLToPath(new URL('./support/app-transaction-child.ts', import.meta.url));

/**
 * Runs the app child to its SIGKILL; resolves with what it printed. Bundled from the sources
 * (support/child-bundle.ts): `node --import tsx` took four times the CPU to start it, six times a file.
 */
async function runChild(args: string[]): Promise<string> {
  const child = spawn(process.execPath, [await childEntry(CHILD), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(out);
      else reject(new Error(`app child exited (${signal ?? code}): ${err}`));
    });
  });
}

for (const kind of ['sqlite', 'postgres', 'mysql'] as AppKind[]) {
  describe(`an app process killed around its commit, on ${kind}`, () => {
    const databases = testDatabases(kind);
    if (!databases) return;

    it('after a restart the committed receipt is delivered once, the uncommitted one never', {
      timeout: 300_000,
    }, async () => {
      const url = await databases.create();
      const seed = await openAppDatabase(kind, url, 2);
      const seeding = createMailroom({ store: seed.store, transport: smtpTransport('smtp://127.0.0.1:9') });
      const { project, secret } = await seeding.admin.createProject({ name: 'Shop' });
      await seeding.admin.addSender(project.id, { address: 'shop@acme.test' });
      const before = await seed.countRows();
      await seeding.close();
      await seed.db.destroy();

      const uncommitted = await runChild([kind, url, secret, 'o-open', 'open@example.test', 'before-commit']);
      expect(uncommitted).toMatch(/^sent msg_/);
      const committed = await runChild([kind, url, secret, 'o-done', 'done@example.test', 'commit']);
      expect(committed).toBe('committed\n');

      // The restart: a worker on the database, sending to a real SMTP sink.
      const sink = await startCountingSink();
      const app = await openAppDatabase(kind, url, 2);
      const mailroom = createMailroom({
        store: app.store,
        transport: smtpTransport({ host: sink.host, port: sink.port }),
      });
      try {
        expect(await app.orders()).toEqual(['o-done']);
        const after = await app.countRows();
        // One mailing, batch, delivery and profile more, and nothing else: no trace of the open one.
        const grown = Object.entries(after)
          .filter(([table, n]) => n !== before[table])
          .map(([table, n]) => [table, n - (before[table] ?? 0)]);
        expect(Object.fromEntries(grown)).toEqual({
          mailroom_batches: 1,
          mailroom_deliveries: 1,
          mailroom_mailings: 1,
          mailroom_profiles: 1,
        });
        await mailroom.worker.drain();
        await mailroom.worker.drain();
        expect(sink.arrivals.map((a) => a.rcpt)).toEqual(['done@example.test']);
      } finally {
        await mailroom.close();
        await app.close();
        await sink.close();
      }
    });
  });
}
