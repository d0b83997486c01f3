/**
 * Builds the message a delivery sends: rendered from its mailing's prepared content and composed into
 * MIME by the core, on the main thread or on the render threads (the same composer module there). Either
 * way the transport gets the same thing: bytes and envelope (and the fields, for a transport that wants
 * them, which renders on the main thread).
 */
import type { Logger } from '../base/base-types.js';
import type { OutgoingComposer } from '../mime/outgoing-composer.js';
import { renderDelivery } from '../render/index.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type { ClaimedDelivery } from '../store/records.js';
import { trackingRewrite } from '../tracking/tracking-links.js';
import type { OutgoingMailingContext, RawOutgoingMessage } from '../transport/transport.js';
import { composeMessage } from './compose-message.js';
import type { MailingEntry } from './mailing-cache.js';
import { createRenderPool, type RenderPool } from './render-pool.js';

/** What one delivery's message is built from. */
export interface BuildRequest {
  entry: MailingEntry;
  delivery: ClaimedDelivery;
  /** Extra headers of this delivery (List-Unsubscribe). */
  headers: Record<string, string>;
  /** The envelope sender: the VERP address with `bounces`, else the sender. */
  envelopeFrom: string;
  /** Whether the envelope sender is a VERP address (the engine has `bounces`). */
  verp: boolean;
  context: OutgoingMailingContext;
  now: Date;
}

/** A built message and the rendered content to keep when the mailing stores it. */
export interface BuiltOutgoing {
  outgoing: RawOutgoingMessage;
  content: DeliveryOutcome['content'];
}

/** Builds messages for one worker; `close` stops its render threads (started again on demand). */
export interface OutgoingBuilder {
  /** Whether messages are built on render threads. */
  readonly threaded: boolean;
  /**
   * The message of one delivery.
   * @throws MailroomError `RENDER_FAILED` (final for this recipient), a composition failure, or a
   * retryable error when a render thread died.
   */
  build(request: BuildRequest): Promise<BuiltOutgoing>;
  close(): Promise<void>;
}

/** A builder on `threads` render threads (0: the main thread), with the transport's composer. */
export function createOutgoingBuilder(options: {
  composer: OutgoingComposer;
  threads: number;
  strictVariables: boolean;
  logger: Logger;
}): OutgoingBuilder {
  const { composer } = options;
  let pool: RenderPool | undefined;
  return {
    threaded: options.threads > 0,
    async build({ entry, delivery, headers, envelopeFrom, verp, context, now }) {
      const { mailing } = entry;
      if (options.threads > 0) {
        pool ??= createRenderPool({
          threads: options.threads,
          composer: composer.threadComposer,
          strictVariables: options.strictVariables,
          logger: options.logger,
        });
        const built = await pool.build(entry, delivery, headers, now);
        const outgoing: RawOutgoingMessage = {
          messageId: delivery.messageId,
          envelope: { from: envelopeFrom, to: [delivery.address] },
          from: mailing.sender.address,
          raw: built.raw,
          mailing: context,
        };
        return { outgoing, content: built.content };
      }
      const rendered = renderDelivery(
        entry.prepared,
        delivery,
        trackingRewrite(entry.prepared, stamp(delivery, now)),
      );
      const message = composeMessage(mailing, delivery, rendered, entry.parts, headers, now);
      if (verp) message.envelopeFrom = envelopeFrom;
      return { outgoing: composer.compose(message), content: mailing.options.storeContent ? rendered : null };
    },
    async close() {
      const closing = pool;
      pool = undefined;
      await closing?.close();
    },
  };
}

/** What the tracking tokens of one delivery name (used only when its mailing is tracked). */
function stamp(delivery: ClaimedDelivery, now: Date) {
  return { deliveryId: delivery.id, sentAt: Math.floor(now.getTime() / 1000) };
}
