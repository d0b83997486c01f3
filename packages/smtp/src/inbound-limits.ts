import { type Logger, MAX_INBOUND_BYTES, silentLogger } from '@mailroom/core';
import type { InboundServerOptions } from './inbound-server-options.js';
import { type RelayMatcher, trustedRelays } from './trusted-relays.js';

/** The window of the per-minute limits (messages, forged tokens), in milliseconds. */
export const RATE_WINDOW_MS = 60_000;

/** The listener's limits, with the defaults of {@link InboundServerOptions} applied and checked. */
export interface InboundLimits {
  readonly logger: Logger;
  /** Largest message taken, in bytes. */
  readonly maxBytes: number;
  /** Connections open at once from one IP address (trusted relays excepted). */
  readonly maxPerIp: number;
  /** Messages one IP address may send per minute (trusted relays excepted). */
  readonly maxPerMinute: number;
  /** Forged tokens one IP address may send per minute that are still taken (trusted relays excepted). */
  readonly maxForged: number;
  /** Whether a client is one of the trusted relays, exempt from the per-IP limits. */
  readonly isTrusted: RelayMatcher;
  /** Recipients of one message. */
  readonly maxRecipients: number;
  /** Lines of a message's top-level header. */
  readonly maxHeaderLines: number;
  /** Bytes of a message's top-level header. */
  readonly maxHeaderBytes: number;
  /** Milliseconds of the window in which floods are counted and logged once. */
  readonly abuseLogWindowMs: number;
}

/** The listener's limits from its options; throws a `TypeError` naming an option out of its range. */
export function resolveInboundLimits(options: InboundServerOptions): InboundLimits {
  const maxPerMinute = options.maxMessagesPerMinute ?? 6000;
  if (!(maxPerMinute >= 1)) throw new TypeError('inboundSmtpServer: maxMessagesPerMinute must be at least 1');
  const maxForged = options.maxForgedPerMinute ?? 60;
  if (!(maxForged >= 0)) throw new TypeError('inboundSmtpServer: maxForgedPerMinute must be at least 0');
  return {
    logger: options.logger ?? silentLogger,
    // With receiving routes, the engine's cap for routed mail (25 MiB by default) is the listener's too.
    maxBytes: options.maxBytes ?? options.receiving?.maxMessageBytes ?? MAX_INBOUND_BYTES,
    maxPerIp: options.maxConnectionsPerIp ?? 10,
    maxPerMinute,
    maxForged,
    isTrusted: trustedRelays(options.trustedRelays ?? []),
    maxRecipients: options.maxRecipients ?? 20,
    maxHeaderLines: options.maxHeaderLines ?? 1000,
    maxHeaderBytes: options.maxHeaderBytes ?? 64 * 1024,
    abuseLogWindowMs: options.abuseLogWindowMs ?? 60_000,
  };
}
