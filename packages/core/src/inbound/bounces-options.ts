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
}
