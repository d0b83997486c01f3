import type { MailboxUnavailableOptions } from './mailbox-unavailable.js';

/** Options of bounce and complaint handling. */
export interface BouncesOptions {
  /** The domain whose mail the inbound listener receives (its MX points at it): return paths are `b+<token>@<domain>`. */
  domain: string;
  /**
   * The HMAC key of the return-path tokens (at least 16 characters). Every process that sends or receives
   * bounces needs the same one.
   * @default a random secret generated once and kept in the store (`Store.ensureSetting`), shared by every
   * process on that store
   */
  secret?: string;
  /**
   * Soft bounces in a row (on distinct deliveries, with no delivery report in between) after which an
   * address is suppressed.
   * @default 3
   */
  softBounceLimit?: number;
  /**
   * When a full mailbox or a suspended account (the recipient-side soft reasons, which do not count
   * towards `softBounceLimit`) becomes a suppression with the reason `mailbox-unavailable`.
   * @default `{ limit: 3, windowDays: 14 }`: 3 such bounces on distinct deliveries over 14 days, with no
   * delivery to the address in between
   */
  mailboxUnavailable?: MailboxUnavailableOptions;
}
