import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeTestSuite } from '@mailroom/core/testing';
import Database from 'better-sqlite3';
import { SqliteDialect } from 'kysely';
import { afterAll } from 'vitest';
import { sqlStore } from '../src/index.js';
import { migratedSqliteFile } from './support/databases.js';

// A store on a Kysely dialect of the caller's runs every statement through Kysely: the store cannot reach
// the driver, so none of the direct better-sqlite3 paths of a store opened from a URL. The kit checks
// that path too. (No multi-process tests: they open a second store on the same database by URL.)
const dir = mkdtempSync(join(tmpdir(), 'mailroom-sql-kysely-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

let template: Promise<string> | undefined;

storeTestSuite('sql:sqlite (Kysely dialect)', async () => {
  // An empty database: a copy of a file migrated once (the kit's init() finds it current).
  template ??= migratedSqliteFile(dir);
  const file = join(dir, `store-${++n}.db`);
  copyFileSync(await template, file);
  const database = new Database(file);
  database.pragma('journal_mode = WAL');
  return sqlStore({ dialect: new SqliteDialect({ database }), kind: 'sqlite' });
});
