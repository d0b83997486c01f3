import type { DeliveryRecord, MailingRecord } from '../store/records.js';
import type { UnsubscribeRequest, UnsubscribeTarget } from './unsubscribe-options.js';

/** The one-click unsubscribe links of an engine (RFC 8058). Internal; the engine exposes its methods. */
export interface UnsubscribeLinks {
  /** The link of one delivery: `<baseUrl>/unsubscribe/<token>`. */
  link(mailing: MailingRecord, delivery: DeliveryRecord): Promise<string>;
  /** Who a token unsubscribes, changing nothing. `NOT_FOUND` for a forged, altered or unknown token. */
  resolve(token: string): Promise<UnsubscribeTarget>;
  /**
   * Unsubscribes the token's address: from the message's topic when it had one (and not `everything`),
   * else from everything (profile status `unsubscribed`). Idempotent; every change is a consent record.
   * `NOT_FOUND` as for `resolve`.
   */
  unsubscribe(token: string, request?: UnsubscribeRequest): Promise<UnsubscribeTarget>;
}
