import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { toStoreError } from '../src/connection/sql-errors.js';
import { sqlStore } from '../src/index.js';
import { sqlConformanceOn } from './support/conformance.js';
import { pgbouncerDatabases } from './support/databases.js';
import { type Pgbouncer, pgbouncerExecutable, startPgbouncer } from './support/pgbouncer.js';
import { missingServerTest, testServer } from './support/servers.js';

/**
 * The Store conformance kit on PostgreSQL through PgBouncer in transaction mode (issue 42): every store
 * primitive, including the claims, the fenced completions, the limits and the pauses, with the store's
 * `pgbouncer=true` (no statement prepared by name).
 */
const server = await testServer('postgres');
const executable = server.problem === undefined ? await pgbouncerExecutable() : undefined;

if (server.problem !== undefined) {
  missingServerTest(server, 'sql:postgres through PgBouncer');
} else if (executable !== undefined && 'problem' in executable) {
  if (process.env.CI)
    it('finds or installs PgBouncer', () => {
      throw new Error(executable.problem);
    });
  else it.skip(`sql:postgres through PgBouncer: ${executable.problem}`);
} else if (executable !== undefined) {
  const bouncer: Pgbouncer = await startPgbouncer(executable.path, server.url);
  const databases = pgbouncerDatabases(bouncer);
  afterAll(async () => {
    await databases.dropAll();
    await bouncer.close();
  });
  describe('a store that prepares statements by name, through a transaction pooler', () => {
    it('fails with an error that names the setting', async () => {
      const { url, drop } = await bouncer.database('mr_pgb_hint');
      const plain = url.replace('?pgbouncer=true', '');
      const [a, b] = [new pg.Client({ connectionString: plain }), new pg.Client({ connectionString: plain })];
      await a.connect();
      await b.connect();
      try {
        // Two clients take turns on PgBouncer's one idle server connection: the second one's name clashes.
        await a.query({ name: 'mailroom_1', text: 'SELECT 1' });
        const failed = await b.query({ name: 'mailroom_1', text: 'SELECT 2' }).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failed).toBeDefined();
        const error = toStoreError(failed, 'sql:postgres', 'claim');
        expect(error.code).toBe('STORE_FAILED');
        expect(error.message).toContain('pgbouncer=true');
        expect(error.message).toContain('transactionPooling: true');
      } finally {
        await a.end();
        await b.end();
        await drop();
      }
    });
  });
  describe('migrations through a transaction pooler', () => {
    it('leave no advisory lock behind, so the next process opens at once', { timeout: 60_000 }, async () => {
      const { url, directUrl, drop } = await bouncer.database('mr_pgb_migrate');
      const stores = [1, 2, 3].map(() => sqlStore({ url, poolSize: 2 }));
      try {
        // Three processes' stores migrating the same new database at once, as workers starting together do.
        await Promise.all(stores.map((store) => store.init()));
        const admin = new pg.Client({ connectionString: directUrl });
        await admin.connect();
        try {
          const held = await admin.query(
            "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = current_database()",
          );
          expect(held.rows[0]?.n).toBe(0);
        } finally {
          await admin.end();
        }
        const next = sqlStore({ url, poolSize: 2 });
        stores.push(next);
        await next.init();
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await drop();
      }
    });
  });
  sqlConformanceOn('sql:postgres through PgBouncer (transaction mode)', databases);
}
