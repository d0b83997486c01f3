import type { SqlKind } from '../connection/options.js';
import { mysqlDialect } from './mysql/mysql-dialect.js';
import { postgresDialect } from './postgres/postgres-dialect.js';
import type { SqlDialect } from './sql-dialect.js';
import { sqliteDialect } from './sqlite/sqlite-dialect.js';

const DIALECTS: Record<SqlKind, SqlDialect> = {
  sqlite: sqliteDialect,
  postgres: postgresDialect,
  mysql: mysqlDialect,
};

/** The dialect of `kind`: the one place the store goes from which database it is on to how it speaks. */
export function dialectOf(kind: SqlKind): SqlDialect {
  return DIALECTS[kind];
}
