import type { Db } from '../connection/connect.js';
import type { RunResult, SqlRunner } from '../connection/sql-runner.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import type { InsertOptions, InsertTarget } from './insert-target.js';

/**
 * Insert `rows` (one parameter array per row, in `target.columns` order) with few statements, skipping
 * or updating rows whose key exists. PostgreSQL gets one statement over `unnest` of one array per column:
 * its text and plan do not grow with the row count, which a `VALUES` list of thousands of parameters
 * would make the dominant cost. SQLite and MySQL get `VALUES` lists chunked under their parameter limits.
 * `affected` counts inserted rows when skipping (for MySQL updates it is its own affected-rows count).
 */
export async function insertMany<R = Record<string, unknown>>(
  dialect: SqlDialect,
  runner: SqlRunner,
  db: Db,
  target: InsertTarget,
  rows: unknown[][],
  options: InsertOptions = {},
): Promise<RunResult<R>> {
  const result: RunResult<R> = { rows: [], affected: 0 };
  if (rows.length === 0) return result;
  const { columns } = target;
  const single = dialect.insertAll?.(target, rows, options);
  if (single) return runner.run<R>(db, single.text, single.params);

  for (const chunk of runner.chunk(rows, columns.length)) {
    const text = dialect.insertValues(target, runner.values(chunk.length, columns.length), options);
    const chunkResult = await runner.run<R>(db, text, chunk.flat());
    result.rows.push(...chunkResult.rows);
    result.affected += chunkResult.affected;
  }
  return result;
}
