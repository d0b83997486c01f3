import type { BaseContext } from '../context/base-context.js';
import type { TransactionStore } from '../store/app-transaction-store.js';

/**
 * What accepting a request uses: the base context with its store narrowed to the roles an accepted
 * request reads and writes, bound to the app's transaction when it gave one. Narrow on purpose: nothing
 * on the accept path can reach the store outside that transaction (on SQLite such a call would wait for
 * the very connection the transaction holds). Internal.
 */
export type AcceptContext = Pick<
  BaseContext,
  'clock' | 'logger' | 'limits' | 'strictVariables' | 'storeContentDefault' | 'fetcher'
> & { store: TransactionStore };
