import { MailroomError } from '../base/errors.js';
import type { AppTransaction, TransactionStore } from '../store/app-transaction-store.js';
import type { Store } from '../store/store.js';

/**
 * Runs `run` on the roles of `store` bound to the app's transaction, or refuses with `TRANSACTION_REFUSED`
 * when the store cannot write in it: never a send outside the transaction the app asked for.
 */
export function inAppTransaction<T>(
  store: Store,
  transaction: AppTransaction,
  run: (store: TransactionStore) => Promise<T>,
): Promise<T> {
  if (typeof transaction !== 'object' || transaction === null) {
    throw new MailroomError(
      'TRANSACTION_REFUSED',
      `options.transaction must be the app's open transaction (an object), not ${transaction === null ? 'null' : typeof transaction}`,
    );
  }
  if (store.capabilities.appTransactions !== true || store.withTransaction === undefined) {
    throw new MailroomError(
      'TRANSACTION_REFUSED',
      `the ${store.name} store cannot write in the app's transaction: its data is not kept in the app's database (it does not declare capabilities.appTransactions); use sqlStore on the app's database, or send without a transaction`,
      { source: store.name },
    );
  }
  return store.withTransaction(transaction, run);
}
