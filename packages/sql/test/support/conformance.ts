import { storeTestSuite } from '@mailroom/core/testing';
import type { SqlKind, SqlUrlOptions } from '../../src/index.js';
import { sameDatabase, storeOn, type TestDatabases, testDatabases } from './databases.js';

/**
 * Runs the Store conformance kit on `kind`: every test gets a store on a new, empty database, and the
 * multi-process tests open further stores (own connections) on the same one. `options`: store
 * options of every store the kit opens (the first opener of a SQLite file sets them for the process).
 */
export function sqlConformance(kind: SqlKind, options: Partial<SqlUrlOptions> = {}): void {
  const databases = testDatabases(kind);
  if (!databases) return;
  const name = Object.keys(options).length === 0 ? `sql:${kind}` : `sql:${kind} ${JSON.stringify(options)}`;
  storeTestSuite(name, async () => storeOn(await databases.empty(), 4, options), { connect: sameDatabase });
}

/** Runs the Store conformance kit on databases of `databases` (for example through PgBouncer), under `name`. */
export function sqlConformanceOn(
  name: string,
  databases: TestDatabases,
  options: Partial<SqlUrlOptions> = {},
): void {
  storeTestSuite(name, async () => storeOn(await databases.empty(), 4, options), { connect: sameDatabase });
}
