import type { InsertOptions, InsertTarget } from '../writes/insert-target.js';
import type { SqlDialect } from './sql-dialect.js';

/**
 * The statement texts PostgreSQL and SQLite share: both speak `INSERT ... ON CONFLICT (key) DO ...`
 * with `excluded` for the incoming row, and limit a write by a subquery on its key.
 */
export const onConflictStatements: Pick<
  SqlDialect,
  'insertIgnore' | 'onConflictUpdate' | 'insertValues' | 'limitedWhere'
> = {
  insertIgnore: (table, columns, values, key) =>
    `INSERT INTO ${table} (${columns}) VALUES ${values} ON CONFLICT (${key}) DO NOTHING`,

  onConflictUpdate: (table, key, sets) =>
    ` ON CONFLICT (${key}) DO UPDATE SET ${sets({
      stored: (column) => `${table}.${column}`,
      incoming: (column) => `excluded.${column}`,
    }).join(', ')}`,

  insertValues({ table, columns, key }: InsertTarget, values: string, { update, returning }: InsertOptions) {
    const onConflict = update
      ? `DO UPDATE SET ${update.map((column) => `${column} = excluded.${column}`).join(', ')}`
      : 'DO NOTHING';
    return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values} ON CONFLICT (${key}) ${onConflict}${returning ? ` RETURNING ${returning}` : ''}`;
  },

  limitedWhere(table, key, where) {
    const list = key.join(', ');
    return `WHERE ${key.length > 1 ? `(${list})` : list} IN (SELECT ${list} FROM ${table} WHERE ${where} LIMIT ?)`;
  },
};
