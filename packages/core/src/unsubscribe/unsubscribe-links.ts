import type { DeliveryRecord, MailingRecord } from '../store/records.js';
import type { UnsubscribeTarget } from './unsubscribe-options.js';

/** The one-click unsubscribe links of an engine (RFC 8058). Internal; the engine exposes its methods. */
export interface UnsubscribeLinks {
  /** The link of one delivery: `<baseUrl>/unsubscribe/<token>`. */
  link(mailing: MailingRecord, delivery: DeliveryRecord): Promise<string>;
  /** Who a token unsubscribes, changing nothing. `NOT_FOUND` for a forged, altered or unknown token. */
  resolve(token: string): Promise<UnsubscribeTarget>;
  /** Marks the token's address `unsubscribed` in its project. Idempotent. `NOT_FOUND` as for `resolve`. */
  unsubscribe(token: string): Promise<UnsubscribeTarget>;
}
