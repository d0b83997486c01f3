import type { Store } from '@mailroom/core';
import { storeTestSuite } from '@mailroom/core/testing';
import { PostgresDialect } from 'kysely';
import pg from 'pg';
import { sqlStore } from '../src/index.js';
import { storeOn, testDatabases } from './support/databases.js';

// A store on a Kysely dialect of the caller's reaches PostgreSQL only through Kysely: no named prepared
// statements and no one-round-trip claim scripts, which need the pool the store opens from a URL. The kit
// checks that path too; its multi-process tests open the other stores by URL, as another process would.
const databases = testDatabases('postgres');
if (databases) {
  const urls = new WeakMap<Store, string>();
  storeTestSuite(
    'sql:postgres (Kysely dialect)',
    async () => {
      const url = await databases.empty();
      const store = sqlStore({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 4 }) }),
        kind: 'postgres',
      });
      urls.set(store, url);
      return store;
    },
    { connect: (store) => storeOn(urls.get(store) ?? '') },
  );
}
