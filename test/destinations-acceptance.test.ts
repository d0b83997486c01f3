import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { describe, expect, it, vi } from 'vitest';
import { missingServerTest, testServer } from '../packages/sql/test/support/servers.js';
import { pgTestSchema } from './support/pg-admin.js';
import { startThrottlingSink } from './support/throttling-sink.js';

const SERVER = await testServer('postgres');
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The sink's throttle and the workers' limit of the google destination: 5 a second. */
const LIMIT = 5;
const GOOGLE = 40;
const OTHERS = 200;

/** `mailroom worker` from the sources, in a process of its own; resolves once it runs. */
async function startCliWorker(args: string[]): Promise<{ child: ChildProcess; err: () => string }> {
  const child = spawn(
    process.execPath,
    [
      // One process (as `pnpm start`): tsx's CLI would run the server in a child of its own, which a
      // SIGKILL of the CLI leaves running (and costs a second Node process's start-up).
      '--import',
      'tsx',
      '--conditions=mailroom-source',
      'packages/cli/src/bin.ts',
      'worker',
      ...args,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MAILROOM_LOG_LEVEL: 'warn' } },
  );
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Mailroom worker running')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before running: ${err}`)));
  });
  return { child, err: () => err };
}

describe('limits per destination shared by two `mailroom worker` processes on PostgreSQL', () => {
  if (SERVER.problem !== undefined) {
    missingServerTest(SERVER, 'destination limits acceptance');
    return;
  }

  it('no second at a throttling sink holds more than the limit; other destinations go meanwhile; all arrive', {
    timeout: 90_000,
  }, async () => {
    const { url, drop } = await pgTestSchema(SERVER.url, 'mr_limits');
    // Answers 421 4.7.28 above 5 google recipients in any second, as Gmail does above its rate.
    const sink = await startThrottlingSink({
      destinationOf: (address) => (address.endsWith('@gmail.com') ? 'google' : 'other'),
      limits: { google: { limit: LIMIT, windowMs: 1_000 } },
    });
    const workers: Array<{ child: ChildProcess; err: () => string }> = [];
    try {
      const seeding = createMailroom({ store: sqlStore({ url, poolSize: 2 }), transport: memoryTransport() });
      const { project, secret } = await seeding.admin.createProject({ name: 'Limits' });
      await seeding.admin.addSender(project.id, { address: 'news@acme.test' });
      const google = Array.from({ length: GOOGLE }, (_, i) => `g${String(i).padStart(3, '0')}@gmail.com`);
      const others = Array.from({ length: OTHERS }, (_, i) => `o${String(i).padStart(3, '0')}@example.test`);
      // Google's recipients first: the others are claimed behind them and must not wait for them.
      const { ref } = await seeding.broadcast(secret, {
        subject: 'Hello',
        sender: 'news@acme.test',
        message: '<p>Hello</p>',
        recipients: [...google, ...others].map((address) => ({ address })),
      });
      await seeding.close();

      const args = [
        '--database',
        url,
        '--smtp',
        `smtp://127.0.0.1:${sink.port}`,
        '--destination-limit',
        `google=${LIMIT}/s`,
        '--concurrency',
        '4',
        '--no-webhooks',
      ];
      workers.push(...(await Promise.all([startCliWorker(args), startCliWorker(args)])));
      await vi.waitFor(
        () => {
          if (sink.delivered.length < GOOGLE + OTHERS) {
            throw new Error(`${sink.delivered.length} delivered; ${workers.map((w) => w.err()).join('\n')}`);
          }
        },
        { timeout: 60_000, interval: 200 },
      );

      expect([...sink.delivered].sort()).toEqual([...google, ...others].sort());
      // Every RCPT counts, accepted or not: the workers together kept to the limit at the receiver.
      expect(sink.maxInWindow('google', 1_000)).toBeLessThanOrEqual(LIMIT);
      expect(sink.arrivals.filter((a) => !a.accepted)).toEqual([]);
      // The others went at full speed meanwhile: all of them arrived before half of google's.
      const googleArrivals = sink.arrivals.filter((a) => a.destination === 'google');
      const lastOther = Math.max(...sink.arrivals.filter((a) => a.destination === 'other').map((a) => a.at));
      expect(lastOther).toBeLessThan((googleArrivals[GOOGLE / 2] as { at: number }).at);

      // Waiting for the limit counted no attempt: each delivery was sent on its one attempt.
      const store = sqlStore({ url, poolSize: 2 });
      const mailing = await store.getMailing(project.id, ref);
      const deliveries = await store.listDeliveries(mailing?.id as string, { limit: 1_000 });
      expect(deliveries).toHaveLength(GOOGLE + OTHERS);
      expect(deliveries.filter((d) => d.status === 'sent' && d.attempts === 1)).toHaveLength(GOOGLE + OTHERS);
      await store.close();
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(
        workers.map(
          (w) =>
            new Promise((resolve) =>
              w.child.exitCode !== null ? resolve(null) : w.child.once('exit', resolve),
            ),
        ),
      );
      await sink.close();
      await drop();
    }
  });
});
