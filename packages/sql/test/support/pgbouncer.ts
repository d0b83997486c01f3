/**
 * PgBouncer in transaction mode in front of the test PostgreSQL, for the tests that prove the store works
 * through a pooler (issue 42). The executable is `MAILROOM_PGBOUNCER` if set, else `pgbouncer` on `PATH`
 * or in `/usr/sbin`; on a machine that has none but can install one (root and `apt-get`), Debian's
 * `pgbouncer` is installed once, test files in other forks waiting on a lock file. Otherwise the set-up
 * fails with one line that says how to get one (under `CI`), or the suite skips saying so.
 *
 * Each test gets a database of its own (`CREATE DATABASE`): PgBouncer does not pass the `options`
 * start-up parameter on, so a schema per test (as the direct tests use) cannot be chosen through it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { findOrInstall } from '../../../../test/support/find-or-install.js';
import { freePort } from '../../../../test/support/free-port.js';

/** One line that tells a developer how to get PgBouncer. */
export const HOW_TO_INSTALL_PGBOUNCER =
  'install PgBouncer (Debian/Ubuntu: sudo apt-get install -y pgbouncer) or set MAILROOM_PGBOUNCER to its executable';

/** Time for a `beforeAll` that starts PgBouncer: installing it with apt-get can take a minute. */
export const PGBOUNCER_SETUP_TIMEOUT_MS = 5 * 60_000;

/**
 * The PgBouncer executable, found or installed (root with apt-get; test/support/find-or-install.ts), or
 * the one-line reason there is none.
 */
export async function pgbouncerExecutable(): Promise<{ path: string } | { problem: string }> {
  try {
    const path = await findOrInstall({
      debPackage: 'pgbouncer',
      names: ['pgbouncer'],
      envVar: 'MAILROOM_PGBOUNCER',
      extraDirs: ['/usr/sbin', '/usr/local/sbin'],
      noRecommends: true,
      missing: 'no PgBouncer found',
      howToInstall: HOW_TO_INSTALL_PGBOUNCER,
    });
    return { path };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}

/** A running PgBouncer in transaction mode in front of the PostgreSQL server of `serverUrl`. */
export interface Pgbouncer {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** A new, empty database on the server: its URL through PgBouncer (with `pgbouncer=true`) and how to drop it. */
  database(prefix: string): Promise<{ url: string; directUrl: string; drop(): Promise<void> }>;
  /** Stops PgBouncer and removes its files. */
  close(): Promise<void>;
}

/** Runs `fn` on a direct admin connection to `url`. */
async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Starts PgBouncer (`pool_mode = transaction`, trust authentication, every database name passed to the
 * server) on a free loopback port, as the `postgres` user when run by root (PgBouncer refuses root).
 */
export async function startPgbouncer(executable: string, serverUrl: string): Promise<Pgbouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-pgbouncer-'));
  // PgBouncer runs as another user when started by root: it must read its files and write its log.
  chmodSync(dir, 0o777);
  const port = await freePort();
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
  writeFileSync(
    config,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      'default_pool_size = 20',
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const args = process.getuid?.() === 0 ? ['-u', 'postgres', config] : [config];
  const child: ChildProcess = spawn(executable, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const through = (database: string) => `postgres://${user}@127.0.0.1:${port}/${database}?pgbouncer=true`;

  // Up when a query through it answers.
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited at start: ${stderr.trim()}`);
    try {
      await admin(through(server.pathname.slice(1) || 'postgres').replace('?pgbouncer=true', ''), (c) =>
        c.query('SELECT 1'),
      );
      break;
    } catch (error) {
      if (Date.now() - started > 15_000)
        throw new Error(`pgbouncer did not answer: ${String(error)} ${stderr}`);
      await sleep(50);
    }
  }

  return {
    port,
    async database(prefix) {
      const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
      await admin(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
      const direct = new URL(serverUrl);
      direct.pathname = `/${name}`;
      return {
        url: through(name),
        directUrl: direct.toString(),
        drop: () =>
          admin(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
            () => {},
          ),
      };
    },
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
