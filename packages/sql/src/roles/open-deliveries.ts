import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * ` AND <alias>.open_at IS NOT NULL` where the dialect's indexes of open deliveries are partial on it
 * (PostgreSQL, migration 034), nothing elsewhere. Added to a condition that already asks for open
 * deliveries (`status` queued or sending), it selects the same rows: `open_at` is set exactly for those.
 * It is there for the planner, which matches a partial index by its condition's own columns.
 */
export function andOpenAt(dialect: SqlDialect, alias?: string): string {
  return dialect.partialOpenAt ? ` AND ${alias ? `${alias}.` : ''}open_at IS NOT NULL` : '';
}
