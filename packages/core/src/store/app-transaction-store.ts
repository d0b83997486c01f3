import type { AccountStore } from './account-store.js';
import type { AudienceStore } from './audience-store.js';
import type { AutomationStore } from './automation-store.js';
import type { ConsentStore } from './consent-store.js';
import type { DomainStore } from './domain-store.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { MailingStore } from './mailing-store.js';

/**
 * The app's own open transaction, as the store documents what it takes: for `@mailroom/sql`, a Kysely
 * `Transaction` (or a Kysely instance running inside one, such as Prisma's `tx.$kysely`) on the store's
 * database, or a `pg` client inside `BEGIN ... COMMIT` on a PostgreSQL store.
 */
export type AppTransaction = object;

/**
 * The roles a request accepted inside the app's transaction reads and writes through, every statement
 * on that transaction: the secret, sender, template and group lookups, the sender's domain (the sending
 * policy), a named topic, the batch commit and its settling, and the idempotency key; and, for a tracked
 * event, the workflows it starts and the event with its runs.
 */
export type TransactionStore = AccountStore &
  AudienceStore &
  MailingStore &
  IdempotencyStore &
  Pick<DomainStore, 'getDomain'> &
  Pick<ConsentStore, 'getTopic'> &
  Pick<AutomationStore, 'findTriggered' | 'getWorkflowVersion' | 'trackEvent'>;

/**
 * The optional ability to write an accepted request in the app's own database transaction, so that the
 * app's rows and the message commit together or not at all. A store that has it says so with
 * `capabilities.appTransactions`; the core refuses a transaction for any other store
 * (`TRANSACTION_REFUSED`) rather than send outside it.
 */
export interface AppTransactionStore {
  /**
   * Run `run` with the roles bound to `transaction`, all or nothing within it: on success its writes are
   * part of the app's transaction (visible to other connections, the worker's included, only once the
   * app commits; gone if it rolls back); if `run` throws, what it wrote is undone (a savepoint) and the
   * app's transaction is left as it was, still usable. Never commits or rolls back the app's transaction,
   * and never retries: a deadlock or serialization failure is reported, and retrying the whole
   * transaction is the app's.
   *
   * Refuses, with `TRANSACTION_REFUSED` and the reason, what it cannot prove to be an open transaction on
   * its own database (another database, driver or dialect; not inside a transaction), before writing
   * anything. Calls on one transaction object run one at a time.
   */
  withTransaction?<T>(transaction: AppTransaction, run: (store: TransactionStore) => Promise<T>): Promise<T>;
}
