/**
 * A PostgreSQL database closed for maintenance (`ALTER DATABASE ... ALLOW_CONNECTIONS false`: new
 * connections fail with SQLSTATE 55000 "not currently accepting connections", existing ones are ended)
 * is an outage like the others (issue 36): `mailroom serve` answers 503 `STORE_UNAVAILABLE` with
 * `Retry-After`, never a 500, and takes mail again once the database accepts connections.
 */
import { randomBytes } from 'node:crypto';
import { type RunningServer, startServer } from '@mailroom/cli';
import type { Logger } from '@mailroom/core';
import { describe, expect, it } from 'vitest';
import { missingServerTest, testServer } from '../packages/sql/test/support/servers.js';
import { pgAdmin } from './support/pg-admin.js';
import { waitUntil } from './support/wait.js';

const SERVER = await testServer('postgres');
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

describe('a PostgreSQL database that does not accept connections (SQLSTATE 55000)', () => {
  if (SERVER.problem !== undefined) {
    missingServerTest(SERVER, 'PostgreSQL maintenance test');
    return;
  }

  it('answers 503 with Retry-After while closed, 200 once open again', { timeout: 60_000 }, async () => {
    const name = `mr_maint_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    await pgAdmin(SERVER.url, (client) => client.query(`CREATE DATABASE ${name}`));
    const url = new URL(SERVER.url);
    url.pathname = `/${name}`;
    let server: RunningServer | undefined;
    const close = (allow: boolean) =>
      pgAdmin(SERVER.url, async (client) => {
        await client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS ${allow}`);
        if (!allow) {
          await client.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [name],
          );
        }
      });
    try {
      server = await startServer({
        port: 0,
        host: '127.0.0.1',
        database: { url: url.toString(), label: 'scratch postgres' },
        delivery: { kind: 'outbox', dir: `/tmp/${name}-outbox`, label: 'outbox' },
        worker: false,
        logger: silent,
      });
      const secret = server.demo?.secret as string;
      const send = () =>
        fetch(`${server?.url}/send/mail`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            subject: 'Hi',
            sender: 'demo@mailroom.local',
            message: 'Hello',
            recipients: 'ann@example.test',
          }),
        });
      expect((await send()).status).toBe(200);

      await close(false);
      // The first attempts may meet connections ended by the terminate (57P01, an outage already);
      // every new connection meets 55000.
      const answers: Array<{ status: number; retryAfter: string | null; code: string | undefined }> = [];
      for (let i = 0; i < 5; i++) {
        const res = await send();
        const body = (await res.json()) as { code?: string };
        answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), code: body.code });
      }
      for (const answer of answers) {
        expect(answer).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE' });
        expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      }
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(503);

      await close(true);
      await waitUntil(async () => (await send()).status === 200, 20_000, { intervalMs: 200 });
    } finally {
      await server?.stop().catch(() => {});
      await pgAdmin(SERVER.url, async (client) => {
        await client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    }
  });
});
