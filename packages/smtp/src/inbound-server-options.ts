import type { Logger, MailroomInbound, MailroomReceiving } from '@mailroom/core';

/** Options of `inboundSmtpServer`. */
export interface InboundServerOptions {
  /** The engine's inbound role: `mailroom.inbound` (it must have the `bounces` option). */
  inbound: MailroomInbound;
  /**
   * The engine's receiving role: `mailroom.receiving`. With it, the listener also takes mail for the
   * addresses its routes take (any receiving domain whose MX points here), and refuses every other address
   * outside the bounce domain with `550 5.1.1`. Without it, only the bounce domain is served.
   */
  receiving?: MailroomReceiving;
  /** @default 25 */
  port?: number;
  /** @default '0.0.0.0' */
  host?: string;
  /** Name in the greeting and EHLO reply. @default the bounce domain, else `mailroom` */
  name?: string;
  /**
   * Largest message accepted, in bytes (announced with SIZE; a larger one is refused with 552). A
   * receiving project's own cap (`receiving.updateSettings({ max_message_bytes })`) refuses its routed mail
   * with 552 below this one.
   * @default `receiving.maxMessageBytes` (25 MiB) with a receiving role, else 10 MiB
   */
  maxBytes?: number;
  /** Connections open at once, from everyone (each may hold up to `maxBytes` while it is read). @default 50 */
  maxConnections?: number;
  /** Connections open at once from one IP address (trusted relays excepted). @default 10 */
  maxConnectionsPerIp?: number;
  /**
   * Messages one IP address may send per minute (trusted relays excepted): a bucket of this many that
   * refills evenly over the minute; past it, messages are deferred with 451 (the relay tries again
   * later). The default lets one relay return 100 reports a second.
   * @default 6000
   */
  maxMessagesPerMinute?: number;
  /**
   * Messages to a forged or edited return-path token one IP address may send per minute (trusted relays
   * excepted) that are still taken, with 250, and dropped unparsed. Past it, such a recipient is refused
   * at RCPT with 550, before the client sends a byte of the message: a flood of forged tokens costs the
   * listener a command and an HMAC per message, never its data. A relay that edits the tokens of real
   * reports sends far fewer than this.
   * @default 60
   */
  maxForgedPerMinute?: number;
  /**
   * Networks in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`, or one address) whose clients are exempt
   * from the per-IP limits: your own relays, which return every report of a large broadcast.
   * @default []
   */
  trustedRelays?: readonly string[];
  /** Recipients of one message. @default 20 */
  maxRecipients?: number;
  /**
   * Milliseconds of client silence before the connection is closed: what a connection that never sends
   * costs at most. @default 60000
   */
  socketTimeoutMs?: number;
  /** Milliseconds `close()` waits for open connections before it drops them. @default 5000 */
  closeTimeoutMs?: number;
  /**
   * Lines in a message's top-level header (folded lines count). A message with more is refused with 552
   * as its bytes arrive, without keeping them or parsing it. @default 1000
   */
  maxHeaderLines?: number;
  /** Bytes of a message's top-level header; more is refused as `maxHeaderLines` is. @default 64 KiB */
  maxHeaderBytes?: number;
  /**
   * Milliseconds of the window in which floods (forged return-path tokens, refused connections, oversized
   * headers) are counted and logged once, instead of a line per event. @default 60000
   */
  abuseLogWindowMs?: number;
  /** PEM key and certificate: STARTTLS is offered only with both. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  logger?: Logger;
}
