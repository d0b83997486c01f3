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
import type { SendRenderGuard } from './render-guard.js';
import { createRenderLane, type RenderLane } from './render-lane.js';
import { type BuiltMessage, createRenderPool, type RenderPool, RenderRequeued } from './render-pool.js';

/**
 * A build on a shared render thread that runs this long is a runaway (`RenderPoolOptions.stuckMs`): its
 * project renders on the slow lane from then on, and its builds waiting behind it are taken off the
 * thread. A normal email builds in a few milliseconds; a runaway template holds the thread up to the
 * render limit (a second per part), and every build posted behind it would wait as long.
 */
export const STUCK_RENDER_MS = 250;

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
   * @throws MailroomError `RENDER_FAILED` (final for this recipient), a composition failure, a
   * retryable error when a render thread died, or `RATE_LIMITED` with `retryAfter` when the project's
   * render time was used up while the build waited on the slow lane.
   */
  build(request: BuildRequest): BuiltOutgoing | Promise<BuiltOutgoing>;
  close(): Promise<void>;
}

/**
 * A builder on `threads` render threads (0: the main thread), with the transport's composer. With a
 * `guard`, render time is charged to the projects (`render-guard.ts`) and a slow project's builds go to
 * the slow lane (`render-lane.ts`), a thread of its own, when `lane` allows (the transport takes bytes).
 */
export function createOutgoingBuilder(options: {
  composer: OutgoingComposer;
  threads: number;
  strictVariables: boolean;
  logger: Logger;
  guard?: SendRenderGuard;
  /** Whether slow projects may build on the slow lane (false: a transport that wants fields). */
  lane?: boolean;
}): OutgoingBuilder {
  const { composer, guard } = options;
  let pool: RenderPool | undefined;
  let lane: RenderLane | undefined;

  const onThread = (request: BuildRequest): Promise<BuiltOutgoing> => {
    const { entry, delivery, headers, envelopeFrom, context, now } = request;
    const { mailing } = entry;
    let building: Promise<BuiltMessage>;
    if (guard && options.lane !== false && guard.isSlow(mailing.projectId)) {
      lane ??= createRenderLane({
        composer: composer.threadComposer,
        strictVariables: options.strictVariables,
        logger: options.logger,
        guard,
      });
      building = lane.build(entry, delivery, headers, now);
    } else {
      pool ??= createRenderPool({
        threads: options.threads,
        composer: composer.threadComposer,
        strictVariables: options.strictVariables,
        logger: options.logger,
        ...(guard
          ? {
              onRender: (projectId, ms) => guard.rendered(projectId, ms),
              stuckMs: STUCK_RENDER_MS,
              onStuck: (projectId) => guard.markSlow(projectId),
            }
          : {}),
      });
      building = pool.build(entry, delivery, headers, now);
    }
    return building.then(
      (built) => {
        const outgoing: RawOutgoingMessage = {
          messageId: delivery.messageId,
          envelope: { from: envelopeFrom, to: [delivery.address] },
          from: mailing.sender.address,
          raw: built.raw,
          mailing: context,
        };
        return { outgoing, content: built.content };
      },
      // Its thread was stopped behind a runaway render: built again (on the lane, if it was its own).
      (error: unknown) => {
        if (error instanceof RenderRequeued) return onThread(request);
        throw error;
      },
    );
  };

  return {
    threaded: options.threads > 0,
    // Synchronous on this thread (no wait added to a delivery); a promise from the render threads.
    build(request) {
      const { entry, delivery, headers, envelopeFrom, verp, now } = request;
      const { mailing } = entry;
      if (options.threads > 0) return onThread(request);
      // Without render threads, a slow project still renders on the slow lane's thread: its first runaway
      // render ran here (up to the render limit per part), not the next ones.
      if (guard && options.lane !== false && guard.isSlow(mailing.projectId)) return onThread(request);
      const started = guard ? performance.now() : 0;
      let rendered: ReturnType<typeof renderDelivery>;
      try {
        rendered = renderDelivery(
          entry.prepared,
          delivery,
          trackingRewrite(entry.prepared, stamp(delivery, now)),
        );
      } finally {
        if (guard) guard.rendered(mailing.projectId, performance.now() - started);
      }
      const message = composeMessage(mailing, delivery, rendered, entry.parts, headers, now);
      if (verp) message.envelopeFrom = envelopeFrom;
      return { outgoing: composer.compose(message), content: mailing.options.storeContent ? rendered : null };
    },
    async close() {
      const closing = pool;
      const closingLane = lane;
      pool = undefined;
      lane = undefined;
      await Promise.all([closing?.close(), closingLane?.close()]);
    },
  };
}

/** What the tracking tokens of one delivery name (used only when its mailing is tracked). */
function stamp(delivery: ClaimedDelivery, now: Date) {
  return { deliveryId: delivery.id, sentAt: Math.floor(now.getTime() / 1000) };
}
