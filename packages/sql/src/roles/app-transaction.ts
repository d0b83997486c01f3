import type { AppTransaction, AppTransactionStore, TransactionStore } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import type { Db } from '../connection/connect.js';
import { isTransient, toStoreError } from '../connection/sql-errors.js';
import { createSqlRunner, type SqlRunner } from '../connection/sql-runner.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import type { SqlContext } from '../sql-context.js';
import { createSqlContext } from '../sql-context.js';
import { createBulkWrites } from '../writes/bulk-writes.js';
import { sqlAccountStore } from './account-store.js';
import { sqlAudienceStore } from './audience-store.js';
import { sqlAutomationStore } from './automation-store.js';
import { sqlConsentStore } from './consent-store.js';
import { sqlDomainStore } from './domain-store.js';
import { sqlIdempotencyStore } from './idempotency-store.js';
import { sqlMailingStore } from './mailing-store.js';

/** The savepoint a request runs in, inside the app's transaction (calls on one transaction run one at a time). */
const SAVEPOINT = 'mailroom_request';
/** The setting that names a store's database (random, made by `init()`), so that a transaction can be checked to be on it. */
export const STORE_ID_SETTING = 'store-id';

/** What `appTransactions` needs of its store. */
export interface AppTransactionParts {
  /** The store's context (its database, codec, claims). */
  ctx: SqlContext;
  /** Whether the store was closed. */
  closed: () => boolean;
  /** The database's id (the `store-id` setting), once `init()` has completed. */
  storeId: () => string | undefined;
  /** Runs the store's `init()`. */
  init: () => Promise<void>;
}

/**
 * `withTransaction` of the SQL store: the app's transaction is resolved to a Kysely handle and checked to
 * be an open transaction on the store's own database, the request runs in a savepoint of it on the
 * store's roles rebuilt around that handle, and the savepoint is released (its writes become the app's to
 * commit or roll back) or rolled back when the request throws.
 *
 * Taken: a Kysely `Transaction` of the store's own Kysely instance (checked by identity); on PostgreSQL and
 * MySQL also a Kysely transaction or in-transaction instance of another Kysely on the same database, and
 * on PostgreSQL a `pg` client inside `BEGIN`, each checked by reading the store's id (a random setting)
 * through it. On SQLite only a transaction of the store's own instance: another connection to the file in
 * this process would wait for this transaction's lock with the event loop blocked.
 */
export function sqlAppTransactions(parts: AppTransactionParts): Required<AppTransactionStore> {
  const { ctx } = parts;
  const { name, dialect } = ctx;
  const { kind } = dialect;
  const runner = transactionRunner(dialect);
  const bulk = createBulkWrites(dialect, runner, ctx.codec);
  const queues = new WeakMap<object, Promise<unknown>>();
  const clients = new WeakMap<object, Db>();

  const refuse = (reason: string) =>
    new MailroomError('TRANSACTION_REFUSED', `withTransaction: ${reason}`, { source: name });

  /** The app's transaction as a Kysely handle, and what is known of it without asking the database. */
  function resolve(transaction: AppTransaction): { db: Db; own: boolean; known: boolean } {
    if (isKysely(transaction)) {
      const adapter = transaction.getExecutor().adapter;
      const family = dialectOf(adapter);
      if (family !== kind) {
        throw refuse(`the transaction is a ${family} Kysely handle, but the store is on ${kind}`);
      }
      const own = adapter === ctx.db.getExecutor().adapter;
      const known = transaction.isTransaction;
      // The store's one connection: another to the file would wait for this transaction's lock.
      if (dialect.oneConnection && !(own && known)) {
        throw refuse(
          own
            ? 'on SQLite, pass the Kysely Transaction itself (db.transaction().execute(tx => ...))'
            : 'on SQLite, the transaction must come from the Kysely instance given to sqlStore({ db }): another connection to the file would wait for this transaction’s lock',
        );
      }
      return { db: transaction, own, known };
    }
    if (dialect.takesPgClient && isPgClient(transaction)) {
      let db = clients.get(transaction);
      if (!db) {
        db = clientDb(transaction);
        clients.set(transaction, db);
      }
      return { db, own: false, known: false };
    }
    throw refuse(
      dialect.takesPgClient
        ? 'expected a Kysely Transaction or a pg client inside BEGIN'
        : 'expected a Kysely Transaction',
    );
  }

  /** Checks what `resolve` could not: an open transaction, on this store's database. */
  async function verify(db: Db, known: boolean, own: boolean, id: string): Promise<void> {
    if (!known && dialect.inTransaction && !(await dialect.inTransaction(runner, db))) {
      throw refuse('the connection is not inside a transaction (begin one first)');
    }
    if (own) return;
    let found: unknown;
    try {
      const { rows } = await runner.run<{ value: unknown }>(
        db,
        'SELECT value FROM mailroom_settings WHERE name = ?',
        [STORE_ID_SETTING],
      );
      found = rows[0]?.value;
    } catch (error) {
      throw new MailroomError(
        'TRANSACTION_REFUSED',
        `withTransaction: the transaction's database has no Mailroom tables: it is not the store's database (${errorText(error)})`,
        { source: name, cause: error },
      );
    }
    if (found !== id) {
      throw refuse("the transaction is on another database than the store's");
    }
    // A write that changes nothing, so that a handle whose driver reports no row counts is refused now
    // (the runner refuses such a write), before any row of the request is written.
    await runner.run(db, 'UPDATE mailroom_settings SET value = value WHERE 1 = 0');
  }

  async function runIn<T>(
    transaction: AppTransaction,
    run: (store: TransactionStore) => Promise<T>,
  ): Promise<T> {
    if (parts.closed())
      throw new MailroomError('STORE_FAILED', 'withTransaction: the store is closed', { source: name });
    const { db, own, known } = resolve(transaction);
    if (parts.storeId() === undefined) {
      if (dialect.oneConnection) {
        throw refuse(
          "the store is not initialized: await store.init() before the first send in a transaction (on SQLite the migrations would wait for this transaction's connection)",
        );
      }
      // On the store's own connections, before the savepoint: the app's transaction holds no lock of ours yet.
      await parts.init();
    }
    const id = parts.storeId() as string;
    try {
      await runner.run(db, `SAVEPOINT ${SAVEPOINT}`);
    } catch (error) {
      // PostgreSQL refuses a savepoint outside a transaction block (SQLSTATE 25P01).
      if ((error as { code?: unknown } | null)?.code === '25P01') {
        throw refuse('the connection is not inside a transaction (BEGIN first)');
      }
      throw toStoreError(error, name, 'withTransaction');
    }
    try {
      await verify(db, known, own, id);
      const result = await run(boundRoles(db));
      await runner.run(db, `RELEASE SAVEPOINT ${SAVEPOINT}`);
      return result;
    } catch (error) {
      // Undo the request and leave the app's transaction usable. After a deadlock MySQL has already rolled
      // the whole transaction back, and the savepoint is gone with it: nothing to undo.
      await runner
        .run(db, `ROLLBACK TO SAVEPOINT ${SAVEPOINT}`)
        .then(() => runner.run(db, `RELEASE SAVEPOINT ${SAVEPOINT}`))
        .catch(() => undefined);
      throw toStoreError(error, name, 'withTransaction');
    }
  }

  /** The roles the core may use in the transaction, every statement on `db`. */
  function boundRoles(db: Db): TransactionStore {
    const bound = createSqlContext({
      name,
      dialect,
      db,
      runner,
      codec: ctx.codec,
      bulk,
      // Not used by the bound roles (claims belong to the delivery queue and webhooks).
      claims: ctx.claims,
      guard: async (operation, fn) => {
        try {
          return await fn();
        } catch (error) {
          if (isTransient(error)) {
            throw new MailroomError(
              'STORE_FAILED',
              `${operation} failed for contention (${errorText(error)}); retry the app's whole transaction`,
              { source: name, cause: error, retryable: true },
            );
          }
          throw toStoreError(error, name, operation);
        }
      },
    });
    return {
      ...sqlAccountStore(bound),
      ...sqlAudienceStore(bound),
      ...sqlMailingStore(bound),
      ...sqlIdempotencyStore(bound),
      getDomain: sqlDomainStore(bound).getDomain,
      getTopic: sqlConsentStore(bound).getTopic,
      ...pickAutomations(sqlAutomationStore(bound)),
    };
  }

  return {
    withTransaction(transaction, run) {
      // One request at a time per transaction: their savepoints must not interleave on its connection.
      const before = queues.get(transaction) ?? Promise.resolve();
      const result = before.then(() => runIn(transaction, run));
      queues.set(
        transaction,
        result.catch(() => undefined),
      );
      return result;
    },
  };
}

/** What a tracked event reads and writes in the app's transaction. */
function pickAutomations(
  automations: ReturnType<typeof sqlAutomationStore>,
): Pick<TransactionStore, 'findTriggered' | 'getWorkflowVersion' | 'trackEvent'> {
  const { findTriggered, getWorkflowVersion, trackEvent } = automations;
  return { findTriggered, getWorkflowVersion, trackEvent };
}

/**
 * A runner for statements on the app's transaction: no transaction of its own (the app's is open), no
 * retries (a failed statement may have ended the app's transaction; retrying it is the app's), no direct
 * driver access and no scripts (both would run outside the transaction).
 */
function transactionRunner(dialect: SqlDialect): SqlRunner {
  const plain = createSqlRunner(dialect, { requireAffected: true });
  return {
    ...plain,
    transaction: (tx, fn) => fn(tx),
    connection: (db, fn) => fn(db),
    retrying: (fn) => fn(),
    script: () => undefined,
    statement: () => undefined,
  };
}

function isKysely(value: object): value is Db {
  const candidate = value as Partial<Record<'getExecutor' | 'executeQuery', unknown>>;
  return typeof candidate.getExecutor === 'function' && typeof candidate.executeQuery === 'function';
}

/**
 * The database family of a Kysely adapter, from what it declares (so that any copy of Kysely, and
 * dialects built on its adapters, are recognised): PostgreSQL has transactional DDL and RETURNING, SQLite
 * RETURNING only, MySQL neither; MS SQL (transactional DDL without RETURNING) is none of the store's.
 */
function dialectOf(adapter: { supportsTransactionalDdl: boolean; supportsReturning: boolean }): string {
  if (adapter.supportsTransactionalDdl) return adapter.supportsReturning ? 'postgres' : 'mssql';
  return adapter.supportsReturning ? 'sqlite' : 'mysql';
}

/** The part of a `pg` client (`PoolClient` or `Client`) the store calls. */
interface PgClientLike {
  query(
    text: string,
    values?: unknown[],
  ): Promise<{ command: string; rowCount: number | null; rows: unknown[] }>;
}

function isPgClient(value: object): value is PgClientLike {
  return typeof (value as { query?: unknown }).query === 'function';
}

/** A Kysely handle whose every statement runs on `client` (never released or ended here: it is the app's). */
function clientDb(client: PgClientLike): Db {
  const held = { query: client.query.bind(client), release: () => undefined };
  return new Kysely<unknown>({
    dialect: new PostgresDialect({
      pool: { connect: async () => held, end: async () => undefined } as unknown as PostgresPool,
    }),
  });
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
