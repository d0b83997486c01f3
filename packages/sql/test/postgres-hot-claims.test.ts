import { testTime } from '@mailroom/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { storeOn, testDatabases } from './support/databases.js';
import { seedDeliveries } from './support/seed.js';

/**
 * Issue 42: on PostgreSQL a claim of deliveries is a HOT update (migration 034): it changes no column that
 * an index reads (`status` left the indexes' conditions for `open_at`, `updated_at` the retention index)
 * and the table's pages keep room for the new versions (`fillfactor`), so it writes no index entry. Read
 * from PostgreSQL's statistics of the test's schema once the store's backends have ended (a backend's
 * counts reach them when it exits).
 */
describe('sql:postgres claims are HOT updates', () => {
  const databases = testDatabases('postgres');
  if (!databases) return;
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('claiming a broadcast of 600 deliveries writes no index entry', async () => {
    const url = await databases.create();
    const store = storeOn(url);
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await store.close();
    });
    await store.init();
    await seedDeliveries(store, 600);
    let claimed = 0;
    // Claims in the worker's batches, each a run of rows written together.
    for (let round = 0; round < 6; round++) {
      claimed += (await store.claimDeliveries({ now: testTime(0), limit: 100, leaseMs: 60_000 })).length;
    }
    expect(claimed).toBe(600);
    await store.close();
    closed = true;

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    cleanups.push(() => client.end());
    const schema = new URL(url).searchParams.get('options')?.match(/search_path=(\S+)/)?.[1];
    expect(schema).toBeTruthy();
    const read = async () => {
      const { rows } = await client.query<{ upd: string; hot: string }>(
        `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables
          WHERE schemaname = $1 AND relname = 'mailroom_deliveries'`,
        [schema],
      );
      return { updated: Number(rows[0]?.upd ?? 0), hot: Number(rows[0]?.hot ?? 0) };
    };
    // The ended backends' counts arrive asynchronously: wait until all 600 updates are counted.
    const deadline = Date.now() + 15_000;
    let counts = await read();
    while (counts.updated < 600 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      counts = await read();
    }
    expect(counts.updated).toBe(600);
    expect(counts.hot).toBe(600);
  });
});
