import { MailroomError } from '@mailroom/core';

/** A driver error's identifying fields (pg: `code` SQLSTATE; mysql2: `errno`/`code`; better-sqlite3: `code`). */
interface DriverError {
  code?: unknown;
  errno?: unknown;
}

function fieldsOf(error: unknown): DriverError {
  return typeof error === 'object' && error !== null ? (error as DriverError) : {};
}

/** True when `error` is a unique or primary-key violation on any of the three databases. */
export function isUniqueViolation(error: unknown): boolean {
  const { code, errno } = fieldsOf(error);
  return (
    code === '23505' ||
    code === 'ER_DUP_ENTRY' ||
    errno === 1062 ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/**
 * True when a transaction failed for contention alone and may be run again from the start:
 * PostgreSQL serialization failures and deadlocks, InnoDB deadlocks and lock-wait timeouts, and
 * SQLite's busy errors (another process held the write lock past the busy timeout).
 */
export function isTransient(error: unknown): boolean {
  const { code, errno } = fieldsOf(error);
  if (code === '40001' || code === '40P01' || code === '55P03') return true;
  if (errno === 1213 || errno === 1205) return true;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * The store's error for `error`: a `MailroomError` passes through, a unique violation becomes
 * `CONFLICT`, anything else `STORE_FAILED` with the driver's error as `cause`. A conflict on a record
 * the caller named (`exists`) says which exists, in the words of the admin API and without the driver's
 * prefix: it is about the caller's data, and a CLI prints it as it is.
 */
export function toStoreError(
  error: unknown,
  source: string,
  operation: string,
  exists?: { what: string; projectId: string },
): MailroomError {
  if (error instanceof MailroomError) return error;
  if (isUniqueViolation(error)) {
    if (exists) {
      return new MailroomError('CONFLICT', `${exists.what} already exists in project ${exists.projectId}`, {
        cause: error,
      });
    }
    return new MailroomError('CONFLICT', `${operation}: the record already exists`, { cause: error, source });
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new MailroomError('STORE_FAILED', `${operation} failed: ${detail}`, { cause: error, source });
}
