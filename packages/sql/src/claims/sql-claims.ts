import type { DeliveryOutcome } from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { ClaimSpec } from './claim-spec.js';

/** The lease primitives: claim with a lease, renew it, write an outcome fenced by its token. */
export interface SqlClaims {
  /**
   * Claim up to `spec.limit` due rows and return them as written, decoded. A row is returned to at
   * most one caller: PostgreSQL and MySQL lock the rows they pick with `FOR UPDATE SKIP LOCKED`, so
   * concurrent claimers pass over each other's picks; SQLite picks and updates under the database's
   * write lock (one statement, or on a file the store opened one `BEGIN IMMEDIATE` transaction).
   */
  claim<T>(db: Db, spec: ClaimSpec<T>): Promise<T[]>;
  /**
   * Run `query` (an `ORDER BY <due index> LIMIT` read or claim) so that PostgreSQL walks the due index in
   * order; elsewhere simply run it.
   */
  inDueOrder<R>(db: Db, text: string, params: unknown[]): Promise<R[]>;
  /** Extend to `until` the leases still held (`sending` with the same token); returns their ids. */
  renew(db: Db, leases: ReadonlyArray<{ id: string; leaseToken: number }>, until: number): Promise<string[]>;
  /**
   * The `UPDATE` recording `outcome` and its parameters; the caller appends the delivery id and the
   * lease token, which fence the write: it changes nothing unless the delivery is still `sending` with
   * that token. `byRowid`: the statement starts its condition with `rowid = ?`, so the caller appends
   * the rowid first (see {@link SqlClaims.takeRowid}); the id and the token still fence the write.
   */
  outcome(outcome: DeliveryOutcome, byRowid?: boolean): [string, unknown[]];
  /**
   * The rowid at which a claim with `rememberRowids` found the row `id`, once (the hint is dropped).
   * A hint only: a write through it matches nothing if the row has moved since (a `VACUUM` may renumber
   * rowids), and the caller then writes by id. Saves looking the id up in its index on the hot path.
   */
  takeRowid(id: string): number | undefined;
}
