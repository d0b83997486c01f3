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
 * True when PostgreSQL did not know (26000) or already had (42P05) one of the statements the store
 * prepares by name (`mailroom_<n>`): the sign of a pooler that moves a client between server connections.
 */
function isLostPreparedStatement(error: unknown): boolean {
  const { code } = fieldsOf(error);
  return (
    (code === '26000' || code === '42P05') && error instanceof Error && /"mailroom_\d+"/.test(error.message)
  );
}

/** Node's socket errors that mean the database could not be reached or the connection was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL SQLSTATEs of a database that is out for now: class 08 (connection exception), shutting
 * down or starting (57P01-57P03), too many connections (53300).
 */
const PG_UNAVAILABLE = /^(08[0-9A-Z]{3}|57P0[1-3]|53300)$/;

/** mysql2's codes of a lost or refused connection, and MySQL's errnos of a server that is out. */
const MYSQL_UNAVAILABLE_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
]);
const MYSQL_UNAVAILABLE_ERRNOS = new Set([1040, 1053, 2002, 2003, 2006, 2013]);

/** Messages of pg's pool and client when a connection could not be made or was lost (they carry no code). */
const PG_CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|connect ECONNREFUSED/i;

/**
 * A server or database that refuses new connections for now, whatever its code: PostgreSQL's 55000
 * `database "x" is not currently accepting connections` (`ALTER DATABASE ... ALLOW_CONNECTIONS false`, a
 * maintenance window) and 57P03 `the database system is not accepting connections`. 55000 alone
 * (`object_not_in_prerequisite_state`) also names a statement's own faults, so the message decides.
 */
const NOT_ACCEPTING_CONNECTIONS = /not (currently )?accepting (new )?connections/i;

/**
 * What kind of outage `error` is, if any: `full` for a disk with no room (SQLite's `SQLITE_FULL`, or its
 * shared-memory file that could not grow), `unavailable` for a database that cannot be reached for now
 * (refused, reset or timed-out connections, a server shutting down or out of connections, a database not
 * accepting connections (PostgreSQL 55000 in maintenance), a SQLite file
 * still busy after its busy timeout and the runner's retries, an I/O error). Undefined for the errors of
 * a statement itself, which retrying will not cure.
 */
export function outageOf(error: unknown): 'full' | 'unavailable' | undefined {
  const { code, errno } = fieldsOf(error);
  if (typeof code === 'string') {
    if (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_SHMSIZE') return 'full';
    if (/^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|PROTOCOL)/.test(code)) return 'unavailable';
    if (NETWORK_CODES.has(code) || MYSQL_UNAVAILABLE_CODES.has(code) || PG_UNAVAILABLE.test(code)) {
      return 'unavailable';
    }
  }
  if (typeof errno === 'number' && MYSQL_UNAVAILABLE_ERRNOS.has(errno)) return 'unavailable';
  if (error instanceof Error && PG_CONNECTION_MESSAGES.test(error.message)) return 'unavailable';
  if (error instanceof Error && NOT_ACCEPTING_CONNECTIONS.test(error.message)) return 'unavailable';
  // pg wraps a failed connect attempt's socket error as the cause of its own.
  if (error instanceof Error && error.cause !== undefined && error.cause !== error) {
    return outageOf(error.cause);
  }
  return undefined;
}

/**
 * The store's error for `error`: a `MailroomError` passes through, a unique violation becomes
 * `CONFLICT`, an outage (see {@link outageOf}) `STORE_UNAVAILABLE` or `STORAGE_FULL`, anything else
 * `STORE_FAILED` with the driver's error as `cause`. This is the one place a driver's error is read. A conflict on a record
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
  if (isLostPreparedStatement(error)) {
    return new MailroomError(
      'STORE_FAILED',
      `${operation} failed: ${detail}. The store's prepared statements were lost between statements: is a pooler in transaction mode (PgBouncer) in front of PostgreSQL? Open the store with \`transactionPooling: true\` or add \`pgbouncer=true\` to the URL`,
      { cause: error, source },
    );
  }
  const outage = outageOf(error);
  if (outage === 'full') {
    return new MailroomError('STORAGE_FULL', `${operation} failed: the disk is full (${detail})`, {
      cause: error,
      source,
    });
  }
  if (outage === 'unavailable') {
    return new MailroomError('STORE_UNAVAILABLE', `${operation} failed: ${detail}`, { cause: error, source });
  }
  return new MailroomError('STORE_FAILED', `${operation} failed: ${detail}`, { cause: error, source });
}
