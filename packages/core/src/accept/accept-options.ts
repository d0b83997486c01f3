import type { ValidationIssue } from '../base/errors.js';
import type { BatchMode } from '../request/batch-send-parse.js';
import type { AppTransaction } from '../store/app-transaction-store.js';
import type { MailingStatus } from '../store/records.js';

/** Options of idempotency keys. */
export interface IdempotencyOptions {
  /** How long a key is remembered after its first request (per project). @default 86_400_000 (24 hours) */
  ttlMs?: number;
}
/** Per-call options of `send` and `broadcast`. */
export interface RequestOptions {
  /**
   * An idempotency key (1 to 256 characters), kept per project for `idempotency.ttlMs`. A repeat of the same
   * call with the same key and body answers the first result (with `replayed: true`) and sends nothing again;
   * the same key with another body, or while the first call is still running, is `IDEMPOTENCY_CONFLICT`. A
   * call that fails does not use up its key.
   */
  idempotencyKey?: string;
  /**
   * The app's own open transaction on the store's database: every row of the request (mailing, batch,
   * deliveries, profiles, the idempotency key) is written through it, so the message is sent once the app
   * commits, and never if it rolls back (a rolled-back idempotency key can be used again). For
   * `@mailroom/sql`: a Kysely `Transaction` on the store's database (on SQLite, of the very Kysely instance
   * given to `sqlStore({ db })`), or on PostgreSQL a `pg` client inside `BEGIN ... COMMIT`. A store that
   * cannot write in it (the memory store, another database) refuses with `TRANSACTION_REFUSED` before
   * writing anything; a failed request leaves the transaction as it was. Initialize the store
   * (`store.init()`) before the first such call on SQLite.
   *
   * @example
   * await db.transaction().execute(async (tx) => {
   *   await tx.insertInto('orders').values(order).execute();
   *   await mailroom.send(secret, receipt, { transaction: tx });
   * });
   */
  transaction?: AppTransaction;
}
/** What `send` answers. */
export interface SendResult {
  ref: string;
  status: MailingStatus;
  /** True when this is the first call's answer, replayed for a repeated idempotency key. */
  replayed?: boolean;
}
/** What `broadcast` answers, for the initial batch and later ones. */
export interface BroadcastResult {
  ref: string;
  status: MailingStatus;
  /** The batch just committed. */
  batch: { seq: number; recipients: number; inserted: number };
  /** True when this is the first call's answer, replayed for a repeated idempotency key. */
  replayed?: boolean;
}

/** One item's answer: accepted (its message's ref), or refused (why). */
export type SendBatchItemResult =
  | {
      index: number;
      ref: string;
      status: MailingStatus;
      /** True when the item's own idempotency key answered an earlier send's result. */
      replayed?: boolean;
    }
  | {
      index: number;
      error: { code: string; message: string; issues: ValidationIssue[] };
    };

/** What `sendBatch` answers. */
export interface SendBatchResult {
  mode: BatchMode;
  /** Items accepted (sent now, scheduled, or replayed by their own key). */
  accepted: number;
  /** Items refused (only in `partial` mode; `strict` refuses the whole batch instead). */
  refused: number;
  /** One answer per item, in the order of `items`. */
  items: SendBatchItemResult[];
  /** True when this is the first call's answer, replayed for a repeated batch idempotency key. */
  replayed?: boolean;
}
