/**
 * `mailroom key create|list|revoke|rotate` against a real SQLite database, checked through the engine's own
 * authentication on the same file; and a database made before 010_api_keys: its project secret keeps working
 * as a `full` key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliIo, main } from '@mailroom/cli';
import { createMailroom, hashSecret, type KeyView, type Mailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MIGRATION_LOCK_TABLE,
  MIGRATION_TABLE,
  mailroomMigrations,
} from '../packages/sql/src/migrations/migrations.js';

async function run(cwd: string, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s), isTTY: false },
    stderr: { write: (s: string) => (err += s) },
    env: {},
    cwd,
    onShutdown: () => () => {},
  };
  const code = await main(argv, io);
  return { code, out, err };
}

const SECRET = /sk_(live|sandbox)_[A-Za-z0-9_-]{16,}/g;

describe('mailroom key commands (SQLite)', () => {
  let dir: string;
  let db: string;
  let engine: Mailroom | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-keys-'));
    db = join(dir, 'keys.db');
  });

  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** The engine on the same database file, as `mailroom serve` would open it. */
  function open(): Mailroom {
    engine = createMailroom({ store: sqlStore({ url: `sqlite:${db}` }), transport: memoryTransport() });
    return engine;
  }

  it('creates a scoped, domain-limited key, lists it without secrets, rotates with a grace, revokes', async () => {
    const project = await run(dir, ['project', 'create', 'Acme', '--database', db, '--json']);
    const { project: p, secret } = JSON.parse(project.out) as { project: { id: string }; secret: string };

    const created = await run(dir, [
      'key',
      'create',
      '--project',
      p.id,
      '--scope',
      'sending',
      '--domain',
      'Example.com',
      '--domain',
      'mail.example.org',
      '--database',
      db,
      '--json',
    ]);
    expect(created.code, created.err).toBe(0);
    const { key, secret: keySecret } = JSON.parse(created.out) as { key: KeyView; secret: string };
    expect(key).toMatchObject({
      scope: 'sending',
      domains: ['example.com', 'mail.example.org'],
      state: 'active',
    });

    const human = await run(dir, ['key', 'create', '--project', p.id, '--scope', 'read', '--database', db]);
    expect(human.code).toBe(0);
    expect(human.out.match(SECRET)).toHaveLength(1);

    const listed = await run(dir, ['key', 'list', '--project', p.id, '--database', db, '--json']);
    expect(listed.code).toBe(0);
    expect(listed.out.match(SECRET) ?? []).toEqual([]);
    expect((JSON.parse(listed.out) as KeyView[]).map((k) => k.scope)).toEqual(['full', 'sending', 'read']);
    const text = await run(dir, ['key', 'list', '--project', p.id, '--database', db]);
    expect(text.out).toContain(`${key.id}  ${key.prefix}…  sending  example.com,mail.example.org  active`);
    expect(text.out.match(SECRET) ?? []).toEqual([]);

    let mailroom = open();
    expect((await mailroom.authenticate(keySecret)).key).toEqual({
      id: key.id,
      scope: 'sending',
      domains: ['example.com', 'mail.example.org'],
    });
    expect((await mailroom.authenticate(secret)).key?.scope).toBe('full');
    await mailroom.close();
    engine = undefined;

    const rotated = await run(dir, [
      'key',
      'rotate',
      '--project',
      p.id,
      key.id,
      '--grace',
      '1h',
      '--database',
      db,
      '--json',
    ]);
    expect(rotated.code, rotated.err).toBe(0);
    const after = JSON.parse(rotated.out) as { key: KeyView; secret: string; previous: KeyView };
    expect(after.key).toMatchObject({ scope: 'sending', domains: ['example.com', 'mail.example.org'] });
    const graceMs = Date.parse(String(after.previous.expiresAt)) - Date.parse(String(after.key.createdAt));
    expect(graceMs).toBe(3_600_000);

    const revoked = await run(dir, ['key', 'revoke', '--project', p.id, after.key.id, '--database', db]);
    expect(revoked.code).toBe(0);
    expect(revoked.out).toContain(`Revoked key ${after.key.id}`);

    mailroom = open();
    // The old key is in its grace period; the new one was revoked.
    expect((await mailroom.authenticate(keySecret)).key?.id).toBe(key.id);
    await expect(mailroom.authenticate(after.secret)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('refuses a bad scope and a bad grace as usage errors, and an unknown key id as not found', async () => {
    const project = await run(dir, ['project', 'create', 'Acme', '--database', db, '--json']);
    const { project: p } = JSON.parse(project.out) as { project: { id: string } };
    const scope = await run(dir, ['key', 'create', '--project', p.id, '--scope', 'admin', '--database', db]);
    expect(scope.code).toBe(2);
    expect(scope.err).toContain('--scope must be one of full, sending, read');
    const grace = await run(dir, [
      'key',
      'rotate',
      '--project',
      p.id,
      'key_x',
      '--grace',
      'soon',
      '--database',
      db,
    ]);
    expect(grace.code).toBe(2);
    const missing = await run(dir, ['key', 'revoke', '--project', p.id, 'key_nope', '--database', db]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('key_nope');
  });

  it('a database made before 010_api_keys: its project secret keeps working as a full key', async () => {
    const sqlite = new Database(db);
    const kysely = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) });
    const all = mailroomMigrations('sqlite');
    const before = Object.fromEntries(Object.entries(all).filter(([name]) => name < '010'));
    const migrator = new Migrator({
      db: kysely,
      provider: { getMigrations: async () => before },
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
    });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const legacy = `sk_live_${'L'.repeat(43)}`;
    sqlite
      .prepare('INSERT INTO mailroom_projects (id, name, created_at) VALUES (?, ?, ?)')
      .run('prj_legacy', 'Legacy', 1_700_000_000_000);
    sqlite
      .prepare(
        'INSERT INTO mailroom_project_secrets (hash, project_id, mode, created_at) VALUES (?, ?, ?, ?)',
      )
      .run(hashSecret(legacy), 'prj_legacy', 'live', 1_700_000_000_000);
    await kysely.destroy();

    const mailroom = open();
    const auth = await mailroom.authenticate(legacy);
    expect(auth.project.id).toBe('prj_legacy');
    expect(auth.key).toMatchObject({ scope: 'full', domains: [] });
    const [key] = await mailroom.keys.list(auth);
    expect(key).toMatchObject({ id: auth.key?.id, prefix: 'sk_live_', scope: 'full', state: 'active' });
    // And it can be rotated like any key.
    const rotated = await mailroom.keys.rotate(auth, key?.id ?? '', { graceSeconds: 0 });
    await expect(mailroom.authenticate(legacy)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect((await mailroom.authenticate(rotated.secret)).key?.scope).toBe('full');
  });
});
