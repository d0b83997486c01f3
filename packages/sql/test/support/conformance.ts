import { storeTestSuite } from '@mailroom/core/testing';
import type { SqlKind } from '../../src/index.js';
import { sameDatabase, storeOn, testDatabases } from './databases.js';

/**
 * Runs the Store conformance kit on `kind`: every test gets a store on a new, empty database, and the
 * multi-process tests open further stores (own connections) on the same one.
 */
export function sqlConformance(kind: SqlKind): void {
  const databases = testDatabases(kind);
  if (!databases) return;
  storeTestSuite(`sql:${kind}`, async () => storeOn(await databases.empty()), { connect: sameDatabase });
}
