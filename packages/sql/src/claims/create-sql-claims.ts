import type { Db } from '../connection/connect.js';
import type { SqlRunner } from '../connection/sql-runner.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import type { Codec } from '../rows/codec.js';
import { ms } from '../rows/codec.js';
import { givesAttemptBack } from '../rows/outcome-rows.js';
import type { ClaimSpec } from './claim-spec.js';
import type { SqlClaims } from './sql-claims.js';

/** The lease primitives for one runner. */
export function createSqlClaims(dialect: SqlDialect, runner: SqlRunner, codec: Codec): SqlClaims {
  const outcomeTexts = new Map<number, string>();
  const own = dialect.claims(runner);

  const claims: SqlClaims = {
    async inDueOrder<R>(db: Db, text: string, params: unknown[]): Promise<R[]> {
      if (own.inDueOrder) return own.inDueOrder<R>(db, text, params);
      return (await runner.run<R>(db, text, params)).rows;
    },

    async claim<T>(db: Db, spec: ClaimSpec<T>): Promise<T[]> {
      return own.claim(db, spec);
    },

    async renew(db, leases, until) {
      if (leases.length === 0) return [];
      const ids = leases.map((lease) => lease.id);
      const held = new Array(leases.length).fill('(id = ? AND lease_token = ?)').join(' OR ');
      const where = `status = 'sending' AND id IN ${runner.values(1, ids.length)} AND (${held})`;
      const params = [...ids, ...leases.flatMap((lease) => [lease.id, lease.leaseToken])];
      if (own.renew) return own.renew(db, where, params, until);
      const text = `UPDATE mailroom_deliveries SET lease_expires_at = ? WHERE ${where} RETURNING id`;
      return (await runner.run<{ id: string }>(db, text, [until, ...params])).rows.map((row) =>
        String(row.id),
      );
    },

    takeRowid(id) {
      return own.takeRowid?.(id);
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
      if (givesAttemptBack(outcome)) mask |= 64;
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
