/** A table's shape for a multi-row insert (`insert-many.ts`). */
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
