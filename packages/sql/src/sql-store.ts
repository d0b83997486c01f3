import { randomBytes } from 'node:crypto';
import type { Store } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { createSqlClaims } from './claims/create-sql-claims.js';
import { connect } from './connection/connect.js';
import type { SqlStoreOptions } from './connection/options.js';
import { toStoreError } from './connection/sql-errors.js';
import { createSqlRunner } from './connection/sql-runner.js';
import { dialectOf } from './dialects/dialect-of.js';
import { DEFAULT_SQLITE_RESERVE_MIB, sqliteReserve } from './dialects/sqlite/sqlite-reserve.js';
import { createSqliteSourcePages } from './dialects/sqlite/sqlite-source-pages.js';
import { runMigrations } from './migrations/migrations.js';
import { sqlAccountStore } from './roles/account-store.js';
import { sqlActivityStore } from './roles/activity-store.js';
import { STORE_ID_SETTING, sqlAppTransactions } from './roles/app-transaction.js';
import { sqlAudienceAdminStore } from './roles/audience-admin-store.js';
import { sqlAudienceStore } from './roles/audience-store.js';
import { sqlAutomationStore } from './roles/automation-store.js';
import { sqlConsentStore } from './roles/consent-store.js';
import { sqlDeliveryQueue } from './roles/delivery-queue.js';
import { sqlDestinationLimitStore } from './roles/destination-limit-store.js';
import { sqlDomainStore } from './roles/domain-store.js';
import { sqlEventStore } from './roles/event-store.js';
import { sqlIdempotencyStore } from './roles/idempotency-store.js';
import { sqlInboundSignalStore } from './roles/inbound-signal-store.js';
import { sqlKeyStore } from './roles/key-store.js';
import { sqlMailingStore } from './roles/mailing-store.js';
import { sqlPauseStore } from './roles/pause-store.js';
import { sqlReceivingStore } from './roles/receiving-store.js';
import { sqlResourceStore } from './roles/resource-store.js';
import { sqlRetentionStore } from './roles/retention-store.js';
import { sqlSignupStore } from './roles/signup-store.js';
import { sqlSourceJobStore } from './roles/source-job-store.js';
import { sqlTrackingStore } from './roles/tracking-store.js';
import { createCodec } from './rows/codec.js';
import { createSqlContext, type GuardOptions } from './sql-context.js';
import { createBulkWrites } from './writes/bulk-writes.js';

/**
 * A `Store` on SQL through Kysely: SQLite (better-sqlite3, the embedded default), PostgreSQL (pg) and
 * MySQL/MariaDB (mysql2). Call `init()` once to apply the migrations. Deliveries are claimed with
 * `FOR UPDATE SKIP LOCKED` on PostgreSQL and MySQL, in one write transaction on SQLite, so any number
 * of worker processes may share one database.
 *
 * @example
 * const store = sqlStore({ url: 'sqlite:.mailroom/mailroom.db' });
 * await store.init();
 */
export function sqlStore<DB = unknown>(options: SqlStoreOptions<DB>): Store {
  const { db, kind, release, sqliteFile, sqlitePath, pgPrepare, pgPool } = connect(
    options as SqlStoreOptions,
  );
  const name = `sql:${kind}`;
  const dialect = dialectOf(kind);
  const runner = createSqlRunner(dialect, { root: db, sqliteFile, pgPrepare, pgPool });
  const codec = createCodec(dialect.jsonParsedByDriver);
  const bulk = createBulkWrites(dialect, runner, codec);
  const claims = createSqlClaims(dialect, runner, codec);
  let migrated: Promise<void> | undefined;
  let storeId: string | undefined;
  let closed = false;

  /**
   * Runs one operation: refused once closed, retried when it failed for contention alone, and with any
   * error turned into the store's `MailroomError` (see {@link GuardOptions}).
   */
  const guard = async <T>(
    operation: string,
    fn: () => Promise<T>,
    options: GuardOptions = {},
  ): Promise<T> => {
    if (closed)
      throw new MailroomError('STORE_FAILED', `${operation}: the store is closed`, { source: name });
    try {
      return await (options.retry === false ? fn() : runner.retrying(fn));
    } catch (error) {
      throw toStoreError(error, name, operation, options.exists);
    }
  };
  /**
   * Rows from which a source page goes to the SQLite writer thread (see `sqliteWriterThreadRows`): only
   * on a SQLite file the store opened from a URL.
   */
  const writerThreadRows =
    sqliteFile !== undefined && 'url' in options
      ? Math.max(1, options.sqliteWriterThreadRows ?? 1024)
      : Number.POSITIVE_INFINITY;

  const ctx = createSqlContext({ name, dialect, db, runner, codec, bulk, claims, guard });
  const accounts = sqlAccountStore(ctx);
  const mailings = sqlMailingStore(ctx);
  const idempotency = sqlIdempotencyStore(ctx);
  // A SQLite file keeps free space for the worker; new mail is refused below it, before any write.
  const reserve =
    sqlitePath !== undefined && 'url' in options
      ? sqliteReserve(sqlitePath, options.sqliteReserveMiB ?? DEFAULT_SQLITE_RESERVE_MIB, () =>
          sqliteFile?.()?.truncateWal(),
        )
      : undefined;
  const admit = (operation: string) => {
    if (closed) return;
    reserve?.check(operation);
  };
  const init = () =>
    guard('init', async () => {
      migrated ??= runMigrations(db, dialect)
        .then(async () => {
          // The database's id, for telling whether an app's transaction is on this database.
          const id = randomBytes(16).toString('hex');
          storeId = await accounts.ensureSetting(STORE_ID_SETTING, id, new Date());
        })
        .catch((error: unknown) => {
          migrated = undefined;
          throw error;
        });
      await migrated;
    });
  // Each role is in its own file (roles/*.ts); a dialect's statements and speed paths are in dialects/*/.
  return {
    name,
    capabilities: { multiProcess: true, appTransactions: true },
    init,

    async close() {
      if (closed) return;
      closed = true;
      await release();
    },

    async ping() {
      await guard(
        'ping',
        async () => {
          admit('ping');
          await runner.run(db, 'SELECT 1');
        },
        { retry: false },
      );
    },

    ...accounts,
    ...sqlAudienceStore(ctx),
    ...sqlAudienceAdminStore(ctx),
    ...mailings,
    async commitBatch(batchWrite) {
      admit('commitBatch');
      return mailings.commitBatch(batchWrite);
    },
    async commitBatches(writes) {
      admit('commitBatches');
      return (mailings.commitBatches as NonNullable<typeof mailings.commitBatches>)(writes);
    },
    ...sqlDeliveryQueue(ctx),
    ...sqlSourceJobStore(ctx, createSqliteSourcePages(ctx, writerThreadRows, sqliteFile)),
    ...idempotency,
    async beginIdempotent(record, now) {
      admit('beginIdempotent');
      return idempotency.beginIdempotent(record, now);
    },
    ...sqlRetentionStore(ctx),
    ...sqlInboundSignalStore(ctx),
    ...sqlEventStore(ctx),
    ...sqlTrackingStore(ctx),
    ...sqlDomainStore(ctx),
    ...sqlDestinationLimitStore(ctx),
    ...sqlPauseStore(ctx),
    ...sqlReceivingStore(ctx),
    ...sqlKeyStore(ctx),
    ...sqlResourceStore(ctx),
    ...sqlActivityStore(ctx),
    ...sqlConsentStore(ctx),
    ...sqlAutomationStore(ctx),
    ...sqlSignupStore(ctx),
    ...sqlAppTransactions({ ctx, closed: () => closed, storeId: () => storeId, init }),
  };
}
