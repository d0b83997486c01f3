import type { Logger } from '../base/base-types.js';
import { MailroomError } from '../base/errors.js';
import { createDnsResolver } from '../domains/dns-lookup.js';
import { cachedResolver } from './dns-cache.js';
import { createParsePool } from './parse-pool.js';
import { type ParsedReceived, parseReceived } from './parse-received.js';
import type { ReceivingOptions } from './receiving-options.js';
import type { ReceivingEnvelope } from './receiving-types.js';

/** How received messages are read and judged: on `parseThreads` threads (1 by default), or here. */
export interface ReceivedParser {
  parse(raw: Uint8Array, envelope: ReceivingEnvelope): Promise<ParsedReceived>;
  /** Starts the threads now (the listener is up: messages are coming); resolves once they have loaded. */
  warm(): Promise<void>;
  /** Stops the threads, if any. */
  close(): Promise<void>;
}

/**
 * The parser of received messages that `options` ask for. The checks' DNS is the app's `resolver` when
 * given (asked on the main thread: a function cannot cross threads), else a resolver on `dnsServers` (or
 * the system's), whose answers are kept 30 s (`cachedResolver`).
 */
export function receivedParser(options: ReceivingOptions, logger: Logger): ReceivedParser {
  const authServId = options.authServId ?? 'mailroom';
  const threads = options.parseThreads ?? 1;
  if (!Number.isInteger(threads) || threads < 0 || threads > 64) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      `receiving.parseThreads must be a whole number from 0 to 64, got ${threads}`,
    );
  }
  const servers = options.dnsServers ? { servers: options.dnsServers } : {};
  let resolver = options.resolver;
  // Made on first use: with threads, this thread asks the servers only while none has loaded.
  const here = (raw: Uint8Array, envelope: ReceivingEnvelope) => {
    resolver ??= cachedResolver(createDnsResolver(servers));
    return parseReceived(raw, envelope, { resolver, authServId });
  };
  if (threads === 0) return { parse: here, warm: async () => {}, close: async () => {} };
  const pool = createParsePool({
    threads,
    authServId,
    dns: options.resolver ? { resolver: options.resolver } : servers,
    here,
    logger,
  });
  return pool;
}
