import type { Db } from '../connection/connect.js';
import type { RunResult, SqlRunner } from '../connection/sql-runner.js';

/** A table's shape for {@link insertMany}. */
export interface InsertTarget {
  table: string;
  columns: readonly string[];
  /** PostgreSQL type of each column, in order; `jsonb` columns travel as text and are cast. */
  pgTypes: readonly string[];
  /** The unique key whose conflicts are handled, for example `mailing_id, address`. */
  key: string;
}

/** What to do with a row whose key exists. */
export interface InsertOptions {
  /** Columns replaced from the incoming row; when absent the row is skipped. */
  update?: readonly string[];
  /** `RETURNING` list (PostgreSQL and SQLite only). */
  returning?: string;
}

/**
 * PostgreSQL: one `INSERT ... SELECT ... FROM unnest(...)` for all `rows`, with `?` placeholders (one
 * array per column), optionally only `where` a condition holds (`where` refers to no parameter), and
 * with `onConflict: 'fail'` a key that exists is an error instead of a skipped row.
 */
export function pgInsert(
  target: InsertTarget,
  rows: unknown[][],
  options: InsertOptions & { where?: string; onConflict?: 'fail' } = {},
): { text: string; params: unknown[] } {
  const { table, columns, pgTypes, key } = target;
  const { update, returning, where } = options;
  const list = columns.join(', ');
  // A column with one value in every row (the mailing, the batch, the times, the nulls of a new row)
  // travels once as a scalar instead of as an array of copies: less to encode, send and unnest.
  const scalars: unknown[] = [];
  const arrays: unknown[][] = [];
  const select: string[] = [];
  const unnested: string[] = [];
  const names: string[] = [];
  for (let j = 0; j < columns.length; j++) {
    const column = columns[j] as string;
    const type = pgTypes[j] as string;
    const first = rows[0]?.[j];
    // The first column always unnests: it gives the statement its rows.
    let same = j > 0 && rows.length > 1;
    for (let i = 1; same && i < rows.length; i++) same = (rows[i] as unknown[])[j] === first;
    if (same) {
      select.push(`?::${type}`);
      scalars.push(first);
    } else {
      select.push(type === 'jsonb' ? `u.${column}::jsonb` : `u.${column}`);
      unnested.push(`?::${type === 'jsonb' ? 'text' : type}[]`);
      names.push(column);
      arrays.push(rows.map((row) => row[j]));
    }
  }
  const onConflict = update
    ? `DO UPDATE SET ${update.map((column) => `${column} = excluded.${column}`).join(', ')}`
    : 'DO NOTHING';
  const conflict = options.onConflict === 'fail' ? '' : ` ON CONFLICT (${key}) ${onConflict}`;
  const from = unnested.length > 0 ? ` FROM unnest(${unnested.join(', ')}) AS u(${names.join(', ')})` : '';
  const text = `INSERT INTO ${table} (${list}) SELECT ${select.join(', ')}${from}${where ? ` WHERE ${where}` : ''}${conflict}${returning ? ` RETURNING ${returning}` : ''}`;
  return { text, params: [...scalars, ...arrays] };
}

/**
 * Insert `rows` (one parameter array per row, in `target.columns` order) with few statements, skipping
 * or updating rows whose key exists. PostgreSQL gets one statement over `unnest` of one array per column:
 * its text and plan do not grow with the row count, which a `VALUES` list of thousands of parameters
 * would make the dominant cost. SQLite and MySQL get `VALUES` lists chunked under their parameter limits.
 * `affected` counts inserted rows when skipping (for MySQL updates it is its own affected-rows count).
 */
export async function insertMany<R = Record<string, unknown>>(
  runner: SqlRunner,
  db: Db,
  target: InsertTarget,
  rows: unknown[][],
  options: InsertOptions = {},
): Promise<RunResult<R>> {
  const result: RunResult<R> = { rows: [], affected: 0 };
  if (rows.length === 0) return result;
  const { table, columns, key } = target;
  const { update, returning } = options;
  const list = columns.join(', ');

  if (runner.kind === 'postgres') {
    const { text, params } = pgInsert(target, rows, options);
    return runner.run<R>(db, text, params);
  }

  for (const chunk of runner.chunk(rows, columns.length)) {
    const values = runner.values(chunk.length, columns.length);
    let text: string;
    if (runner.kind === 'mysql') {
      text = update
        ? `INSERT INTO ${table} (${list}) VALUES ${values} ON DUPLICATE KEY UPDATE ${update.map((column) => `${column} = VALUES(${column})`).join(', ')}`
        : `INSERT IGNORE INTO ${table} (${list}) VALUES ${values}`;
    } else {
      const onConflict = update
        ? `DO UPDATE SET ${update.map((column) => `${column} = excluded.${column}`).join(', ')}`
        : 'DO NOTHING';
      text = `INSERT INTO ${table} (${list}) VALUES ${values} ON CONFLICT (${key}) ${onConflict}${returning ? ` RETURNING ${returning}` : ''}`;
    }
    const chunkResult = await runner.run<R>(db, text, chunk.flat());
    result.rows.push(...chunkResult.rows);
    result.affected += chunkResult.affected;
  }
  return result;
}
