import type { SqlStoreOptions } from '../connection/options.js';
import { sqlStore } from '../sql-store.js';

/**
 * Apply the store's pending migrations to a database and release what was opened for it; the same as
 * `init()` on a store. Safe to run from several processes at once, and a no-op when up to date.
 *
 * @example
 * await migrate({ url: process.env.DATABASE_URL ?? 'sqlite:.mailroom/mailroom.db' });
 */
export async function migrate<DB = unknown>(options: SqlStoreOptions<DB>): Promise<void> {
  const store = sqlStore(options);
  try {
    await store.init();
  } finally {
    await store.close();
  }
}
