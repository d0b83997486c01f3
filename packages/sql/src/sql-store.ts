import { randomBytes } from 'node:crypto';
import type { Store } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { STORE_ID_SETTING, sqlAppTransactions } from './app-transaction.js';
import { createBulkWrites } from './bulk-writes.js';
import { createCodec } from './codec.js';
import { connect } from './connect.js';
import { createSqliteSourcePages } from './dialects/sqlite/sqlite-source-pages.js';
import { runMigrations } from './migrations.js';
import type { SqlStoreOptions } from './options.js';
import { sqlAccountStore } from './roles/account-store.js';
import { sqlActivityStore } from './roles/activity-store.js';
import { sqlAudienceStore } from './roles/audience-store.js';
import { sqlDeliveryQueue } from './roles/delivery-queue.js';
import { sqlDomainStore } from './roles/domain-store.js';
import { sqlEventStore } from './roles/event-store.js';
import { sqlIdempotencyStore } from './roles/idempotency-store.js';
import { sqlInboundSignalStore } from './roles/inbound-signal-store.js';
import { sqlKeyStore } from './roles/key-store.js';
import { sqlMailingStore } from './roles/mailing-store.js';
import { sqlRetentionStore } from './roles/retention-store.js';
import { sqlSourceJobStore } from './roles/source-job-store.js';
import { sqlTrackingStore } from './roles/tracking-store.js';
import { createSqlClaims } from './sql-claims.js';
import { createSqlContext, type GuardOptions } from './sql-context.js';
import { toStoreError } from './sql-errors.js';
import { createSqlRunner } from './sql-runner.js';

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
  const { db, kind, release, sqliteFile, pgPrepare, pgPool } = connect(options as SqlStoreOptions);
  const name = `sql:${kind}`;
  const r = createSqlRunner(kind, { root: db, sqliteFile, pgPrepare, pgPool });
  const c = createCodec(kind);
  const bulk = createBulkWrites(r, c);
  const claims = createSqlClaims(r, c);
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
      return await (options.retry === false ? fn() : r.retrying(fn));
    } catch (error) {
      throw toStoreError(error, name, operation, options.exists);
    }
  };
  /** Rows from which a source page goes to the SQLite writer thread (see `sqliteWriterThreadRows`). */
  const writerThreadRows =
    kind === 'sqlite' && 'url' in options
      ? Math.max(1, options.sqliteWriterThreadRows ?? 1024)
      : Number.POSITIVE_INFINITY;

  const ctx = createSqlContext({ name, kind, db, r, c, bulk, claims, guard });
  const accounts = sqlAccountStore(ctx);
  const init = () =>
    guard('init', async () => {
      migrated ??= runMigrations(db, kind)
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

    ...accounts,
    ...sqlAudienceStore(ctx),
    ...sqlMailingStore(ctx),
    ...sqlDeliveryQueue(ctx),
    ...sqlSourceJobStore(ctx, createSqliteSourcePages(ctx, writerThreadRows, sqliteFile)),
    ...sqlIdempotencyStore(ctx),
    ...sqlRetentionStore(ctx),
    ...sqlInboundSignalStore(ctx),
    ...sqlEventStore(ctx),
    ...sqlTrackingStore(ctx),
    ...sqlDomainStore(ctx),
    ...sqlKeyStore(ctx),
    ...sqlActivityStore(ctx),
    ...sqlAppTransactions({ ctx, closed: () => closed, storeId: () => storeId, init }),
  };
}
