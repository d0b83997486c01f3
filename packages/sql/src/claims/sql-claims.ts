import type { DeliveryOutcome } from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { SqlRunner } from '../connection/sql-runner.js';
import { mysqlClaim, mysqlRenew } from '../dialects/mysql/mysql-claims.js';
import { pgClaim, pgInDueOrder } from '../dialects/postgres/postgres-claims.js';
import { createSqliteClaims } from '../dialects/sqlite/sqlite-claims.js';
import type { Codec } from '../rows/codec.js';
import { ms } from '../rows/codec.js';
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

/** The lease primitives for one runner. */
export function createSqlClaims(runner: SqlRunner, codec: Codec): SqlClaims {
  const { kind } = runner;
  const outcomeTexts = new Map<number, string>();
  const sqlite = createSqliteClaims(runner);

  const claims: SqlClaims = {
    async inDueOrder<R>(db: Db, text: string, params: unknown[]): Promise<R[]> {
      if (kind !== 'postgres') return (await runner.run<R>(db, text, params)).rows;
      return pgInDueOrder<R>(runner, db, text, params);
    },

    async claim<T>(db: Db, spec: ClaimSpec<T>): Promise<T[]> {
      if (kind === 'postgres') return pgClaim(runner, db, spec);
      if (kind === 'sqlite') return sqlite.claim(db, spec);
      return mysqlClaim(runner, db, spec);
    },

    async renew(db, leases, until) {
      if (leases.length === 0) return [];
      const ids = leases.map((lease) => lease.id);
      const held = new Array(leases.length).fill('(id = ? AND lease_token = ?)').join(' OR ');
      const where = `status = 'sending' AND id IN ${runner.values(1, ids.length)} AND (${held})`;
      const params = [...ids, ...leases.flatMap((lease) => [lease.id, lease.leaseToken])];
      if (kind !== 'mysql') {
        const text = `UPDATE mailroom_deliveries SET lease_expires_at = ? WHERE ${where} RETURNING id`;
        return (await runner.run<{ id: string }>(db, text, [until, ...params])).rows.map((row) =>
          String(row.id),
        );
      }
      return mysqlRenew(runner, db, where, params, until);
    },

    takeRowid(id) {
      return sqlite.takeRowid(id);
    },

    outcome(outcome, byRowid = false) {
      const params: unknown[] = [outcome.status, outcome.now.getTime()];
      let mask = byRowid ? 32 : 0;
      if (outcome.nextAttemptAt !== undefined) {
        mask |= 1;
        params.push(ms(outcome.nextAttemptAt));
      }
      if (outcome.lastResponse !== undefined) {
        mask |= 2;
        params.push(outcome.lastResponse);
      }
      if (outcome.lastError !== undefined) {
        mask |= 4;
        params.push(outcome.lastError);
      }
      if (outcome.sentAt !== undefined) {
        mask |= 8;
        params.push(ms(outcome.sentAt));
      }
      if (outcome.content !== undefined) {
        mask |= 16;
        params.push(codec.json(outcome.content));
      }
      // The claim's attempt did not happen (`DeliveryOutcome.uncounted`).
      if (outcome.uncounted && outcome.status === 'queued') mask |= 64;
      let text = outcomeTexts.get(mask);
      if (text === undefined) {
        const sets = ['status = ?', 'lease_expires_at = NULL', 'updated_at = ?'];
        if (mask & 1) sets.push('next_attempt_at = ?');
        if (mask & 2) sets.push('last_response = ?');
        if (mask & 4) sets.push('last_error = ?');
        if (mask & 8) sets.push('sent_at = ?');
        if (mask & 16) sets.push('content = ?');
        if (mask & 64) sets.push('attempts = attempts - 1');
        const where = mask & 32 ? 'rowid = ? AND id = ?' : 'id = ?';
        text = `UPDATE mailroom_deliveries SET ${sets.join(', ')} WHERE ${where} AND lease_token = ? AND status = 'sending'`;
        outcomeTexts.set(mask, text);
      }
      return [text, params];
    },
  };
  return claims;
}
