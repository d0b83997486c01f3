import type Database from 'better-sqlite3';
import type { ClaimSpec } from '../../claims/claim-spec.js';
import type { Db } from '../../connection/connect.js';
import type { SqlRunner } from '../../connection/sql-runner.js';
import type { Row } from '../../rows/codec.js';

/** Rowids remembered at most; past it they are all dropped (outcomes are then written by id). */
const MAX_ROWID_HINTS = 65_536;

/** SQLite's claims, and the rowid hints a claim on a file the store opened leaves for the outcome. */
export interface SqliteClaims {
  /**
   * Claim under the database's write lock: on a file the store opened, one `BEGIN IMMEDIATE`
   * transaction; otherwise one `UPDATE ... RETURNING` statement.
   */
  claim<T>(db: Db, spec: ClaimSpec<T>): Promise<T[]>;
  /** The rowid at which a claim with `rememberRowids` found the row `id`, once (see `SqlClaims.takeRowid`). */
  takeRowid(id: string): number | undefined;
}

/** The SQLite claims for one runner. */
export function createSqliteClaims(runner: SqlRunner): SqliteClaims {
  const rowids = new Map<string, number>();

  /**
   * A claim on a SQLite file the store opened: in one `BEGIN IMMEDIATE` transaction (the write lock is
   * taken before reading, so no other process picks the same rows), pick the due rowids, update them,
   * and read them back as written. Measured at the raw driver against the single `UPDATE ... RETURNING`
   * every column: less time per claimed row, because SQLite buffers a RETURNING statement's rows in a
   * temporary table before handing out the first one. With `decodeValues`, each row comes back as one
   * JSON array (the JSON columns embedded as JSON, not as text to parse again), far cheaper to read than
   * the driver building a value per column and parsing the JSON columns again (BENCHMARKS.md, "Store").
   */
  const claimSqliteFile = async <T>(db: Db, spec: ClaimSpec<T>): Promise<T[]> => {
    const { table, due, dueParams, limit, set, setParams, columns, decodeValues } = spec;
    const json = new Set(spec.jsonColumns);
    // The picked rowids, as a table of one column (named so that nothing else of `json_each` can clash
    // with the table's columns); joined from it, the rows come back in the order picked.
    const picked = '(SELECT value AS picked_rowid FROM json_each(?)) AS picked';
    // Each row's values in `columns` order, then its rowid.
    const rows = await runner.transaction(db, async (tx) => {
      // Direct: `tx` is a held connection on a file the store opened.
      const statement = (text: string) => runner.statement(tx, text) as Database.Statement;
      const chosen = statement(`SELECT d.rowid FROM ${table} d WHERE ${due} LIMIT ?`)
        .pluck(true)
        .all([...dueParams, limit]);
      if (chosen.length === 0) return [];
      const list = JSON.stringify(chosen);
      statement(`UPDATE ${table} SET ${set} FROM ${picked} WHERE rowid = picked_rowid`).run([
        ...setParams,
        list,
      ]);
      const from = `FROM ${picked} JOIN ${table} ON rowid = picked_rowid`;
      if (!decodeValues) {
        // Rows as arrays: better-sqlite3 builds an object per row through a slow path.
        return statement(`SELECT ${columns.join(', ')}, rowid ${from}`)
          .raw(true)
          .all(list) as unknown[][];
      }
      const values = columns.map((column) => (json.has(column) ? `json(${column})` : column));
      const texts = statement(`SELECT json_array(${values.join(', ')}, rowid) ${from}`)
        .pluck(true)
        .all(list);
      return (texts as string[]).map((text) => JSON.parse(text) as unknown[]);
    });
    const width = columns.length;
    const idAt = spec.rememberRowids ? columns.indexOf('id') : -1;
    if (idAt >= 0 && rowids.size + rows.length > MAX_ROWID_HINTS) rowids.clear();
    return rows.map((row) => {
      if (idAt >= 0) rowids.set(row[idAt] as string, row[width] as number);
      row.length = width;
      if (decodeValues) return decodeValues(row);
      const out: Row = {};
      for (let i = 0; i < width; i++) out[columns[i] as string] = row[i];
      return spec.decode(out);
    });
  };

  return {
    async claim<T>(db: Db, spec: ClaimSpec<T>): Promise<T[]> {
      const { table, due, dueParams, limit, set, setParams, decode } = spec;
      if (runner.direct) return claimSqliteFile(db, spec);
      // One statement: it takes the write lock before reading, so no other process picks the same rows.
      const text = `UPDATE ${table} SET ${set} WHERE id IN (SELECT d.id FROM ${table} d WHERE ${due} LIMIT ?) RETURNING ${spec.columns.join(', ')}`;
      return (await runner.run<Row>(db, text, [...setParams, ...dueParams, limit])).rows.map(decode);
    },

    takeRowid(id) {
      const rowid = rowids.get(id);
      if (rowid !== undefined) rowids.delete(id);
      return rowid;
    },
  };
}
