import { MailroomError } from '@mailroom/core';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import type { SqlKind, SqlStoreOptions } from './options.js';
import { openSqliteDatabase, sqlitePathOf } from './sqlite-database.js';

/** A database handle the store runs raw SQL through; the table types are the store's own business. */
export type Db = Kysely<unknown>;

/** What {@link connect} resolves the options to. */
export interface Connection {
  db: Db;
  kind: SqlKind;
  /** Whether the store created `db` and so must destroy it on close. */
  owned: boolean;
}

/** Resolve store options to a Kysely instance and the database kind. Opens nothing before first use. */
export function connect(options: SqlStoreOptions): Connection {
  if ('url' in options) return connectUrl(options.url, options.poolSize ?? 10, options.busyTimeoutMs ?? 5000);
  if ('db' in options) return { db: options.db as Db, kind: options.dialect, owned: false };
  return { db: new Kysely<unknown>({ dialect: options.dialect }), kind: options.kind, owned: true };
}

function connectUrl(url: string, poolSize: number, busyTimeoutMs: number): Connection {
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const pool = new pg.Pool({ connectionString: url, max: poolSize });
    return { db: new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) }), kind: 'postgres', owned: true };
  }
  if (/^(mysql|mariadb):\/\//i.test(url)) {
    const pool = createPool({
      uri: url.replace(/^mariadb:/i, 'mysql:'),
      connectionLimit: poolSize,
      charset: 'utf8mb4',
    });
    return { db: new Kysely<unknown>({ dialect: new MysqlDialect({ pool }) }), kind: 'mysql', owned: true };
  }
  const path = sqlitePathOf(url);
  if (path === undefined) {
    throw new MailroomError('INTERNAL', `unsupported database URL scheme: ${url.replace(/\/\/[^@/]*@/, '//***@')}`, {
      source: 'sql',
    });
  }
  const dialect = new SqliteDialect({ database: async () => openSqliteDatabase(path, busyTimeoutMs) });
  return { db: new Kysely<unknown>({ dialect }), kind: 'sqlite', owned: true };
}
