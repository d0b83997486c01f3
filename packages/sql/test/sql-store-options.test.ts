import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MailroomError } from '@mailroom/core';
import { makeProject, makeSecret } from '@mailroom/core/testing';
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { sqlitePathOf } from '../src/dialects/sqlite/sqlite-database.js';
import {
  MIGRATION_LOCK_TABLE,
  MIGRATION_TABLE,
  mailroomMigrations,
  migrate,
  sqlStore,
} from '../src/index.js';
import { storeOn, testDatabases } from './support/databases.js';

const dir = mkdtempSync(join(tmpdir(), 'mailroom-sql-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `options-${++n}.db`);

describe('sqlStore options', () => {
  it('reads SQLite URLs in every documented spelling', () => {
    expect(sqlitePathOf('sqlite:data/m.db')).toBe('data/m.db');
    expect(sqlitePathOf('sqlite:///abs/m.db')).toBe('/abs/m.db');
    expect(sqlitePathOf('file:m.db')).toBe('m.db');
    expect(sqlitePathOf('./m.db')).toBe('./m.db');
    expect(sqlitePathOf(':memory:')).toBe(':memory:');
    expect(sqlitePathOf('sqlite::memory:')).toBe(':memory:');
    expect(sqlitePathOf('postgres://localhost/db')).toBeUndefined();
  });

  it('names itself after the database and declares multiProcess and appTransactions', async () => {
    const stores = [
      sqlStore({ url: ':memory:' }),
      sqlStore({ url: 'postgres://127.0.0.1:1/none' }),
      sqlStore({ url: 'mariadb://127.0.0.1:1/none' }),
    ];
    expect(stores.map((s) => s.name)).toEqual(['sql:sqlite', 'sql:postgres', 'sql:mysql']);
    for (const store of stores)
      expect(store.capabilities).toEqual({ multiProcess: true, appTransactions: true });
    expect(stores.every((s) => typeof s.withTransaction === 'function')).toBe(true);
    await Promise.all(stores.map((s) => s.close()));
  });

  it('refuses an unknown URL scheme without echoing credentials', () => {
    expect(() => sqlStore({ url: 'redis://user:secret@127.0.0.1/0' })).toThrow(MailroomError);
    expect(() => sqlStore({ url: 'redis://user:secret@127.0.0.1/0' })).toThrow(/^(?!.*secret)/);
  });

  it('works on a Kysely instance it does not own, and leaves it open on close', async () => {
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new Database(file()) }) });
    const store = sqlStore({ db, dialect: 'sqlite' });
    await store.init();
    const project = makeProject();
    await store.createProject(project, makeSecret(project.id));
    await store.close();
    const { rows } = await sql<{ n: number }>`select count(*) as n from mailroom_projects`.execute(db);
    expect(rows[0]?.n).toBe(1);
    await db.destroy();
  });

  it('works on a Kysely dialect, and reports a closed store as STORE_FAILED', async () => {
    const store = sqlStore({
      dialect: new SqliteDialect({ database: new Database(file()) }),
      kind: 'sqlite',
    });
    await store.init();
    expect(await store.listProjects()).toEqual([]);
    await store.close();
    await expect(store.listProjects()).rejects.toMatchObject({ name: 'MailroomError', code: 'STORE_FAILED' });
  });

  it('reports an unreachable database as STORE_UNAVAILABLE (an outage, 503) with the cause', async () => {
    const store = sqlStore({ url: 'postgres://nobody@127.0.0.1:1/none', poolSize: 1 });
    const error = await store.getProject('x').catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'MailroomError', code: 'STORE_UNAVAILABLE', status: 503 });
    expect((error as Error).message).toMatch(/^\[sql:postgres\] getProject failed/);
    expect((error as Error).cause).toBeInstanceOf(Error);
    await store.close();
  });

  it('migrate() applies the migrations once', async () => {
    const path = file();
    await migrate({ url: path });
    await migrate({ url: `sqlite:${path}` });
    const db = new Database(path);
    const applied = db.prepare(`select name from ${MIGRATION_TABLE}`).all();
    db.close();
    expect(applied).toEqual([
      { name: '001_initial' },
      { name: '002_settings_retention' },
      { name: '003_events_webhooks' },
      { name: '004_inbound_signals' },
      { name: '005_tracking' },
      { name: '006_webhook_priority' },
      { name: '007_domains' },
      { name: '008_signal_reasons' },
      { name: '009_webhook_circuit' },
      { name: '010_api_keys' },
      { name: '013_pauses' },
      { name: '014_destination_limits' },
      { name: '017_event_series' },
      { name: '018_key_names' },
      { name: '019_delivery_priority' },
      { name: '020_topics_consent' },
      { name: '021_suppression_case' },
      { name: '022_preferences' },
      { name: '023_signup_forms' },
      { name: '024_automations' },
      { name: '025_receiving' },
      { name: '027_delivery_open_index' },
      { name: '028_open_broadcasts' },
      { name: '029_received_mail' },
      { name: '030_unsubscribed_folded' },
      { name: '032_step_counts' },
      { name: '034_hot_claims' },
    ]);
  });

  it("019 gives deliveries kept before it priority 1: claimed, after a new single message's", async () => {
    const path = file();
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new Database(path) }) });
    const all = mailroomMigrations('sqlite');
    const before = Object.fromEntries(Object.entries(all).filter(([name]) => name < '019'));
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => before },
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
    });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    await sql`insert into mailroom_deliveries (id, project_id, mailing_id, batch_id, address, name, variables,
        traits, status, attempts, next_attempt_at, lease_token, message_id, created_at, updated_at)
      values ('dlv_old', 'prj', 'mlg_1', 'bat', 'old@example.org', '', '{}', '{}', 'queued', 0, 1, 0, '<dlv_old@x>', 1, 1)`.execute(
      db,
    );
    await db.destroy();
    await migrate({ url: path });
    const store = sqlStore({ url: path });
    try {
      const [old] = await store.claimDeliveries({ now: new Date(10), limit: 5, leaseMs: 1_000 });
      expect(old).toMatchObject({ id: 'dlv_old', status: 'sending' });
      expect(old?.priority).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('008 fills in the mailing and destination domain of signals kept before it, with no reason', async () => {
    const path = file();
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new Database(path) }) });
    const all = mailroomMigrations('sqlite');
    const before = Object.fromEntries(Object.entries(all).filter(([name]) => name < '008'));
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => before },
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
    });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    await sql`insert into mailroom_deliveries (id, project_id, mailing_id, batch_id, address, name, variables,
        traits, status, attempts, next_attempt_at, lease_token, message_id, created_at, updated_at)
      values ('dlv_1', 'prj', 'mlg_1', 'bat', 'Ann@Example.ORG', '', '{}', '{}', 'sent', 1, 1, 1, '<dlv_1@x>', 1, 1)`.execute(
      db,
    );
    await sql`insert into mailroom_inbound_signals (id, project_id, delivery_id, address, kind, source, status,
        diagnostic, dedupe_key, created_at)
      values ('sig_1', 'prj', 'dlv_1', 'Ann@Example.ORG', 'hard-bounce', 'dsn', '5.1.1', 'x', 'k1', 1),
             ('sig_2', 'prj', 'dlv_gone', 'bob@mx.example.net', 'soft-bounce', 'dsn', null, null, 'k2', 2)`.execute(
      db,
    );
    await db.destroy();
    await migrate({ url: path });
    const store = sqlStore({ url: path });
    try {
      const [one] = await store.listInboundSignals('dlv_1');
      expect(one).toMatchObject({
        mailingId: 'mlg_1',
        domain: 'example.org',
        reason: null,
        reportedAddress: null,
        reportedMessageId: null,
      });
      const [two] = await store.listInboundSignals('dlv_gone');
      expect(two).toMatchObject({ mailingId: '', domain: 'mx.example.net', reason: null });
    } finally {
      await store.close();
    }
  });

  it('021 folds the suppressions kept before it; of two case variants the one stored folded stays', async () => {
    const path = file();
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new Database(path) }) });
    const all = mailroomMigrations('sqlite');
    const before = Object.fromEntries(Object.entries(all).filter(([name]) => name < '021'));
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => before },
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
    });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    await sql`insert into mailroom_suppressions (project_id, address, reason, detail, created_at)
      values ('prj', 'suppA@x.test', 'manual', null, 1), ('prj', 'SUPPA@x.test', 'complaint', null, 2),
             ('prj', 'Bob@x.test', 'hard-bounce', '550', 3), ('prj', 'bob@x.test', 'manual', null, 4),
             ('prj', 'carl@x.test', 'manual', null, 5), ('prj', 'Äda@x.test', 'manual', null, 6)`.execute(db);
    await db.destroy();
    await migrate({ url: path });
    const store = sqlStore({ url: path });
    try {
      const found = await store.findSuppressed('prj', [
        'SuppA@x.test',
        'BOB@x.test',
        'Carl@x.test',
        'Äda@x.test',
      ]);
      expect(found.map((r) => [r.address, r.reason]).sort()).toEqual([
        ['bob@x.test', 'manual'],
        ['carl@x.test', 'manual'],
        ['suppa@x.test', expect.stringMatching(/^(manual|complaint)$/)],
        ['Äda@x.test', 'manual'],
      ]);
      expect(await store.listSuppressions('prj', { after: null, limit: 10 })).toHaveLength(4);
    } finally {
      await store.close();
    }
  });

  it('006 gives webhook messages a priority, 0 for rows that had none, and leads the due index with it', async () => {
    const path = file();
    await migrate({ url: path });
    const db = new Database(path);
    try {
      // A row written as before 006 (no priority column in the insert) reads as priority 0.
      db.prepare(
        `insert into mailroom_webhook_messages (id, project_id, endpoint_id, event_id, event_type, payload,
           status, attempts, next_attempt_at, lease_token, created_at, updated_at)
         values ('msg_old', 'prj', 'wh', 'evt', 'email.sent', '{}', 'pending', 0, 1, 0, 1, 1)`,
      ).run();
      expect(db.prepare(`select priority from mailroom_webhook_messages`).get()).toEqual({ priority: 0 });
      const columns = db.prepare(`pragma index_info('mailroom_webhook_messages_due')`).all() as {
        name: string;
      }[];
      expect(columns.map((c) => c.name)).toEqual(['priority', 'next_attempt_at']);
    } finally {
      db.close();
    }
  });
});

const CLAIMER = fileURLToPath(new URL('./support/sqlite-claimer.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs the claimer script (which opens and migrates the store first) to completion. */
function runClaimer(url: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=mailroom-source', '--import', 'tsx', CLAIMER, url, '0'],
      {
        cwd: REPO_ROOT,
        stdio: ['pipe', 'ignore', 'inherit'],
      },
    );
    child.stdin.end('go\n');
    child.on('error', reject);
    child.on('exit', resolve);
  });
}

describe('concurrent migration', () => {
  it('sql:sqlite: processes opening a new file at once all migrate it', async () => {
    const url = `sqlite:${file()}`;
    expect(await Promise.all([runClaimer(url), runClaimer(url), runClaimer(url)])).toEqual([0, 0, 0]);
    await migrate({ url });
  }, 60_000);

  for (const kind of ['postgres', 'mysql'] as const) {
    describe(`sql:${kind}`, () => {
      const databases = testDatabases(kind);
      if (!databases) return;
      it('stores with their own connections initializing a new database at once all succeed', async () => {
        const url = await databases.create();
        const stores = Array.from({ length: 4 }, () => storeOn(url, 1));
        await Promise.all(stores.map((s) => s.init()));
        expect(await Promise.all(stores.map((s) => s.listProjects()))).toEqual([[], [], [], []]);
        await Promise.all(stores.map((s) => s.close()));
      });

      // init() skips the migrator when the migration table lists exactly this version's migrations: on
      // PostgreSQL only the table of the connection's own schema counts, not a migrated one further on the
      // search path.
      if (kind === 'postgres')
        it('a new schema is migrated even when its search path finds a migrated schema after it', async () => {
          const migrated = await databases.create();
          await migrate({ url: migrated });
          const schemaOf = (url: string) => new URL(url).searchParams.get('options')?.split('=')[1] ?? '';
          const own = new URL(await databases.create());
          const ownSchema = schemaOf(own.toString());
          own.searchParams.set('options', `-c search_path=${ownSchema},${schemaOf(migrated)}`);
          const store = storeOn(own.toString(), 1);
          await store.init();
          await store.close();
          const client = new pg.Client({ connectionString: migrated });
          await client.connect();
          try {
            const { rows } = await client.query<{ name: string }>(
              `SELECT name FROM ${ownSchema}.mailroom_migrations ORDER BY name`,
            );
            expect(rows.map((row) => row.name)).toEqual(Object.keys(mailroomMigrations('postgres')).sort());
          } finally {
            await client.end();
          }
        });
    });
  }
});
