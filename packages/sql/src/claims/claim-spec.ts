import type { Row } from '../rows/codec.js';

/** One claim: which rows are due, what claiming one writes, and what the caller makes of a row. */
export interface ClaimSpec<T> {
  /** The table; the `due` clause refers to it as `d`. */
  table: string;
  /** `WHERE` condition on `d` followed by its `ORDER BY`, with `?` placeholders. */
  due: string;
  dueParams: unknown[];
  limit: number;
  /**
   * MySQL: the index to walk. InnoDB locks every row a locking read looks at, and for a small table the
   * optimizer prefers a scan and a sort, which would lock every due row and starve the other claimers.
   */
  mysqlIndex?: string;
  /** `SET` list applied to every claimed row, with `?` placeholders. */
  set: string;
  setParams: unknown[];
  /** The table's columns: every one is returned. */
  columns: readonly string[];
  /** A claimed row (every column, as the driver returns it) as the caller wants it. */
  decode(row: Row): T;
  /**
   * Optional: a claimed row from its values in `columns` order, with the `jsonColumns` among them
   * already parsed. Given, a claim on a SQLite file the store opened reads each claimed row back as one
   * JSON array, which is cheaper than the driver building a JavaScript value per column.
   */
  decodeValues?: (values: unknown[]) => T;
  /** The columns holding JSON text (see `decodeValues`). */
  jsonColumns?: readonly string[];
  /**
   * Remember where each claimed row is (see {@link SqlClaims.takeRowid}); `columns` has `id`. Only a
   * claim on a SQLite file the store opened does.
   */
  rememberRowids?: boolean;
}
