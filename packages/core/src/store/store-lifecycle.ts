/**
 * Optional abilities a store declares as data; the core reads them to pick a strategy.
 */
export interface StoreCapabilities {
  /**
   * Several processes may claim from this store at once and each delivery is still claimed at most once
   * per lease (SQL stores: true; the memory store: false, it lives in one process).
   */
  readonly multiProcess: boolean;
  /**
   * The store can write an accepted request in the app's own database transaction
   * (`AppTransactionStore.withTransaction`): `send(secret, body, { transaction })`. Absent or false: such a
   * call is refused with `TRANSACTION_REFUSED` (the memory store: its data is not in the app's database).
   */
  readonly appTransactions?: boolean;
}

/** What every store has besides its roles: a name, its capabilities, and its life (open, close). */
export interface StoreLifecycle {
  /** Short name for error messages and logs, for example `memory` or `sql:sqlite`. */
  readonly name: string;
  /** Optional abilities, as data. */
  readonly capabilities: StoreCapabilities;

  /** Prepare the backend (run migrations). Safe to call more than once and from several processes at once. */
  init(): Promise<void>;
  /**
   * Optional: check that the store can take a new send now, cheaply (a trivial query; on SQLite also the
   * disk's free space against the reserve). Resolves when it can; otherwise throws `STORE_UNAVAILABLE`
   * (the database cannot be reached) or `STORAGE_FULL` (no room for new mail). The engine's `health()`
   * calls it; without it, health is read from the outcomes of the store's other calls.
   */
  ping?(): Promise<void>;
  /** Release connections. The store is unusable afterwards. */
  close(): Promise<void>;
}
