import {
  MailroomError,
  type OutgoingMessage,
  type RawOutgoingMessage,
  type SendReceipt,
  type Transport,
} from '@mailroom/core';

const DRIVER_NAME = 'memory';

/** Options of {@link memoryTransport}. */
export interface MemoryTransportOptions {
  /**
   * Decides, per message, whether the send fails: return a `MailroomError` (for example
   * `TRANSPORT_TRANSIENT` or `TRANSPORT_PERMANENT`) to reject `send` with it, or `undefined` to accept
   * the message. A refused message is not put in the outbox.
   * @example failWith: (m) => m.to.address === 'bounce@example.com'
   *   ? new MailroomError('TRANSPORT_PERMANENT', '550 5.1.1 User unknown', { responseCode: 550 })
   *   : undefined
   */
  failWith?: (message: OutgoingMessage) => MailroomError | undefined;
  /**
   * Milliseconds each send waits before it settles, to let tests observe messages in flight.
   * @default 0
   */
  delayMs?: number;
  /**
   * The `maxConcurrency` capability the transport declares.
   * @default 64
   */
  maxConcurrency?: number;
}

/** A transport that keeps what it sends, to assert on in tests. */
export interface MemoryTransport extends Transport {
  /** Every accepted message, in send order. Emptied in place by {@link MemoryTransport.clear}. */
  readonly outbox: OutgoingMessage[];
  /** The accepted messages to `address` (its domain compared case-insensitively), in send order. */
  messagesTo(address: string): OutgoingMessage[];
  /** The last accepted message to `address`, if any. */
  lastMessageTo(address: string): OutgoingMessage | undefined;
  /** Empties the outbox. */
  clear(): void;
}

/**
 * A Transport that sends nowhere: it keeps every message in an outbox, optionally failing some of them
 * (see {@link MemoryTransportOptions.failWith}) so retries and bounces can be tested without a server.
 *
 * @example
 * ```ts
 * const transport = memoryTransport();
 * // ... send through the engine, then:
 * expect(transport.lastMessageTo('ann@example.com')?.subject).toBe('Welcome');
 * ```
 */
export function memoryTransport(options: MemoryTransportOptions = {}): MemoryTransport {
  const outbox: OutgoingMessage[] = [];
  const delayMs = options.delayMs ?? 0;

  const messagesTo = (address: string): OutgoingMessage[] => {
    const wanted = normalize(address);
    return outbox.filter((m) => normalize(m.to.address) === wanted);
  };

  return {
    name: DRIVER_NAME,
    // `fields`: the outbox keeps messages as fields, to assert on (the core renders on the main thread).
    capabilities: { dkim: false, maxConcurrency: options.maxConcurrency ?? 64, fields: true },
    outbox,

    async send(outgoing): Promise<SendReceipt> {
      const message = fieldsOf(outgoing);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const error = options.failWith?.(message);
      if (error) throw error;
      // A copy: the engine may reuse or mutate its message objects after the send.
      outbox.push(structuredClone(message));
      return {
        messageId: message.messageId,
        accepted: [message.to.address],
        rejected: [],
        response: '250 OK (memory)',
      };
    },
    async verify() {},
    async close() {},

    messagesTo,
    lastMessageTo: (address) => messagesTo(address).at(-1),
    clear() {
      outbox.length = 0;
    },
  };
}

/**
 * The message as fields, which the engine gives a transport declaring `capabilities.fields`. A message
 * sent by hand must be composed the same way (`outgoingComposer(transport.capabilities).compose(...)`).
 */
export function fieldsOf(outgoing: RawOutgoingMessage): OutgoingMessage {
  if (outgoing.fields) return outgoing.fields;
  throw new MailroomError(
    'TRANSPORT_PERMANENT',
    `${DRIVER_NAME} transport: message ${outgoing.messageId} came without its fields; compose it with outgoingComposer(transport.capabilities)`,
  );
}

/** The address with its domain lower-cased; the local part is case-sensitive (RFC 5321). */
function normalize(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? address : address.slice(0, at) + address.slice(at).toLowerCase();
}
