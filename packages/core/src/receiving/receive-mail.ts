/**
 * Taking one message for the routes of its recipients: parsed and judged once, then per route (a message to
 * two projects' addresses is stored twice, once for each) stored with its `email.received` event in one
 * transaction (the outbox: a route to a webhook gets that event POSTed to its endpoint only, signed and
 * retried by the webhook sender), then handed to `onInbound` for a route to the handler.
 */
import { foldAddress } from '../base/address-parts.js';
import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { BaseContext } from '../context/base-context.js';
import type { EventHub } from '../context/event-hub.js';
import type { OutboxWrite } from '../store/event-records.js';
import type { ReceivingRouteRecord } from '../store/receiving-store.js';
import type { AttachmentUrls } from './attachment-urls.js';
import type { ParsedReceived } from './parse-received.js';
import type { ReceivingEvents } from './receiving-events.js';
import type { ReceivingOptions } from './receiving-options.js';
import type { ReceivingReads } from './receiving-reads.js';
import { type EffectiveReceiving, effectiveReceiving } from './receiving-settings.js';
import type { InboundMail, ReceivingEnvelope, ReceivingReceipt } from './receiving-types.js';
import { findRepliedDelivery, type RepliedDelivery, replyLink } from './reply-link.js';
import { matchRoute, splitAddress } from './route-match.js';

/** What {@link receiveMail} uses. */
export interface ReceiveParts {
  readonly ctx: BaseContext;
  readonly options: ReceivingOptions;
  /** Reads and judges the message (on a parse thread, or here: `receivedParser`). */
  readonly parse: (raw: Uint8Array, envelope: ReceivingEnvelope) => Promise<ParsedReceived>;
  readonly events: EventHub<ReceivingEvents>;
  readonly defaults: { retentionDays: number; maxMessageBytes: number };
  readonly urls: AttachmentUrls;
  /** The routes and settings, kept a moment (`receivingReads`). */
  readonly reads: ReceivingReads;
}

/** The route of each routed recipient, grouped by route (recipients no route takes are left out). */
export async function routesOf(
  reads: Pick<ReceivingReads, 'routes'>,
  recipients: readonly string[],
): Promise<Map<ReceivingRouteRecord, string[]>> {
  const byDomain = new Map<string, ReceivingRouteRecord[]>();
  const taken = new Map<string, { route: ReceivingRouteRecord; to: string[] }>();
  for (const address of recipients) {
    const parts = splitAddress(address);
    if (!parts) continue;
    let routes = byDomain.get(parts.domain);
    if (!routes) {
      routes = await reads.routes(parts.domain);
      byDomain.set(parts.domain, routes);
    }
    const route = matchRoute(routes, parts.local);
    if (!route) continue;
    const entry = taken.get(route.id) ?? { route, to: [] };
    entry.to.push(address);
    taken.set(route.id, entry);
  }
  return new Map([...taken.values()].map(({ route, to }) => [route, to]));
}

/** Takes one message for its routed recipients (see the file's comment). */
export async function receiveMail(
  parts: ReceiveParts,
  raw: Uint8Array,
  envelope: ReceivingEnvelope,
): Promise<ReceivingReceipt> {
  const { ctx, options, events } = parts;
  await ctx.ready();
  const routed = await routesOf(parts.reads, envelope.envelopeTo);
  if (routed.size === 0) return { messageIds: [] };
  const settings = new Map<string, EffectiveReceiving>();
  for (const route of routed.keys()) {
    if (settings.has(route.projectId)) continue;
    const applies = effectiveReceiving(parts.defaults, await parts.reads.settings(route.projectId));
    // One answer for the whole message (SMTP has one per DATA): past any routed project's cap, refused.
    if (raw.byteLength > applies.maxMessageBytes) {
      throw new MailroomError(
        'PAYLOAD_TOO_LARGE',
        `Message too big (limit ${applies.maxMessageBytes} bytes for a route it is addressed to)`,
      );
    }
    settings.set(route.projectId, applies);
  }
  // Read and judged before anything is stored: the 250 still waits for the store's write below.
  const parsed = await parts.parse(raw, envelope);
  const spam = options.spamVerdict ? await options.spamVerdict(parsed, raw) : null;
  const messageIds: string[] = [];
  for (const [route, to] of routed) {
    const now = ctx.clock.now();
    const id = newId('inm', now.getTime());
    const replied = await findRepliedDelivery(ctx, route.projectId, parsed, to);
    const mail: InboundMail = {
      id,
      project_id: route.projectId,
      route_id: route.id,
      received_at: now.toISOString(),
      ...parsed,
      attachments: await parts.urls.sign(route.projectId, id, parsed.attachments, now),
      envelope: { ...parsed.envelope, to },
      spam,
      replied_to: replied ? replyLink(replied) : null,
    };
    const outbox = joinOutboxes(
      await receivedEvent(ctx, route, mail, now),
      replied ? await repliedEvent(ctx, replied, mail, now) : undefined,
    );
    const retentionMs = (settings.get(route.projectId) as EffectiveReceiving).retentionMs;
    await ctx.store.saveReceivedMessage(
      {
        id,
        projectId: route.projectId,
        routeId: route.id,
        envelopeFrom: envelope.envelopeFrom,
        envelopeTo: to,
        remoteAddress: envelope.remoteAddress,
        message: mail as unknown as Record<string, unknown>,
        createdAt: now,
        fromAddress: foldAddress(mail.from?.address ?? envelope.envelopeFrom),
        expiresAt: Number.isFinite(retentionMs) ? new Date(now.getTime() + retentionMs) : null,
      },
      outbox,
      raw,
    );
    messageIds.push(id);
    events.emit('emailReceived', {
      projectId: route.projectId,
      messageId: id,
      routeId: route.id,
      from: mail.from?.address ?? null,
    });
    if (replied) {
      events.emit('emailReplied', {
        projectId: route.projectId,
        messageId: id,
        deliveryId: replied.delivery.id,
        mailingRef: replied.mailing.ref,
        address: replied.delivery.address,
      });
    }
    if (route.destination.kind === 'handler') await handOver(ctx, options, mail);
  }
  return { messageIds };
}

/** The `email.received` event of a route to a webhook, fanned out to its endpoint only; none otherwise. */
async function receivedEvent(
  ctx: BaseContext,
  route: ReceivingRouteRecord,
  mail: InboundMail,
  now: Date,
): Promise<OutboxWrite | undefined> {
  if (route.destination.kind !== 'webhook') return undefined;
  const endpoint = await ctx.store.getWebhookEndpoint(route.destination.endpointId);
  // An endpoint removed or disabled since the route was made: the message is kept, and listed by the API.
  if (!endpoint?.enabled || endpoint.projectId !== route.projectId) {
    ctx.logger.warn({ routeId: route.id }, 'receiving: the route’s webhook endpoint is gone or disabled');
    return undefined;
  }
  const keys = { mailingRef: null, deliveryId: null, address: mail.from?.address ?? null };
  const data = { inbound: mail as unknown as Record<string, unknown> };
  return ctx.outbox.event(route.projectId, 'email.received', now, keys, data, endpoint);
}

/**
 * The `email.replied` event: fanned out to every endpoint subscribed to it (as any delivery event), with
 * the delivery and mailing it answers and the received message.
 */
async function repliedEvent(
  ctx: BaseContext,
  { delivery, mailing }: RepliedDelivery,
  mail: InboundMail,
  now: Date,
): Promise<OutboxWrite> {
  const keys = { mailingRef: mailing.ref, deliveryId: delivery.id, address: delivery.address };
  return ctx.outbox.event(mail.project_id, 'email.replied', now, keys, {
    mailing: { ref: mailing.ref, kind: mailing.kind },
    delivery: {
      id: delivery.id,
      message_id: delivery.messageId,
      address: delivery.address,
      attempts: delivery.attempts,
    },
    inbound: mail as unknown as Record<string, unknown>,
  });
}

function joinOutboxes(...outboxes: Array<OutboxWrite | undefined>): OutboxWrite | undefined {
  const present = outboxes.filter((o): o is OutboxWrite => o !== undefined);
  if (present.length === 0) return undefined;
  return { events: present.flatMap((o) => o.events), messages: present.flatMap((o) => o.messages) };
}

async function handOver(ctx: BaseContext, options: ReceivingOptions, mail: InboundMail): Promise<void> {
  if (!options.onInbound) {
    ctx.logger.warn({ routeId: mail.route_id }, 'receiving: a route to the handler, but no onInbound option');
    return;
  }
  try {
    await options.onInbound(mail);
  } catch (error) {
    // Stored already: the app finds it through the API; the sender must not send it again.
    ctx.logger.error({ err: error, messageId: mail.id }, 'receiving: onInbound threw');
  }
}
