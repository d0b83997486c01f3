import { newId } from '../base/ids.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type {
  EventData,
  EventRecord,
  EventType,
  OutboxWrite,
  WebhookEndpointRecord,
  WebhookMessageRecord,
  WebhookPriority,
} from '../store/event-records.js';
import type { ClaimedDelivery, DeliveryRecord, MailingRecord } from '../store/records.js';
import type { Store } from '../store/store.js';

/** How long a process trusts its copy of a project's webhook endpoints. */
export const ENDPOINT_CACHE_MS = 5_000;

/**
 * Builds the outbox rows of a change: its events and, for each, one webhook message per enabled
 * endpoint of the project subscribed to the event's type (the fan-out). The core passes them to the
 * store with the change itself, so both commit together (docs/architecture.md, invariant 10).
 *
 * Endpoints are read from the store at most every {@link ENDPOINT_CACHE_MS} per project (and at once
 * after a change made through this engine): an endpoint added from another process receives the events
 * of changes made after it is seen.
 */
export interface EventOutbox {
  /** The events of a delivery outcome (none for a hand-back or a sandbox skip). */
  forDelivery(
    delivery: ClaimedDelivery,
    mailing: MailingRecord,
    outcome: DeliveryOutcome,
  ): Promise<OutboxWrite | undefined>;
  /** One event about a mailing (`broadcast.completed`, `broadcast.cancelled`). */
  forMailing(
    type: EventType,
    mailing: MailingRecord,
    now: Date,
    extra?: Partial<EventData>,
  ): Promise<OutboxWrite>;
  /** One event of any type, with the given data and keys (contacts, tests, later issues' events). */
  event(
    projectId: string,
    type: EventType,
    now: Date,
    keys: Pick<EventRecord, 'mailingRef' | 'deliveryId' | 'address'>,
    data: Omit<EventData, 'event_id' | 'project_id'>,
    only?: WebhookEndpointRecord,
  ): Promise<OutboxWrite>;
  /** Forget the cached endpoints of a project (after adding, changing or removing one). */
  invalidate(projectId: string): void;
}

interface CachedEndpoints {
  until: number;
  endpoints: Promise<WebhookEndpointRecord[]>;
}

/** An outbox builder reading endpoints from `store`. */
export function createEventOutbox(store: Store, cacheMs = ENDPOINT_CACHE_MS): EventOutbox {
  const cache = new Map<string, CachedEndpoints>();

  function endpointsOf(projectId: string): Promise<WebhookEndpointRecord[]> {
    const now = Date.now();
    const hit = cache.get(projectId);
    if (hit && hit.until > now) return hit.endpoints;
    const endpoints = store.listWebhookEndpoints(projectId).then((all) => all.filter((e) => e.enabled));
    // A failed read is not cached: the next change reads again (and this one fails with it, unwritten).
    endpoints.catch(() => cache.delete(projectId));
    if (cache.size >= 4096) cache.clear();
    cache.set(projectId, { until: now + cacheMs, endpoints });
    return endpoints;
  }

  function fanOut(
    events: EventRecord[],
    endpoints: readonly WebhookEndpointRecord[],
    now: Date,
  ): WebhookMessageRecord[] {
    const messages: WebhookMessageRecord[] = [];
    for (const event of events) {
      let payload: string | undefined;
      const priority = webhookPriority(event);
      for (const endpoint of endpoints) {
        if (endpoint.events !== null && !endpoint.events.includes(event.type)) continue;
        payload ??= JSON.stringify(eventPayload(event));
        // An endpoint whose circuit is open gets its new messages due when it may be tried again, so
        // that no claim meanwhile has to pass over them.
        const open = endpoint.circuitOpenUntil;
        messages.push({
          id: newId('msg', now.getTime()),
          projectId: event.projectId,
          endpointId: endpoint.id,
          eventId: event.id,
          eventType: event.type,
          payload,
          priority,
          status: 'pending',
          attempts: 0,
          nextAttemptAt: open && open > now ? open : now,
          leaseExpiresAt: null,
          leaseToken: 0,
          lastStatusCode: null,
          lastError: null,
          createdAt: now,
          updatedAt: now,
        });
      }
    }
    return messages;
  }

  async function write(event: EventRecord, only?: WebhookEndpointRecord): Promise<OutboxWrite> {
    const endpoints = only ? [only] : await endpointsOf(event.projectId);
    return { events: [event], messages: fanOut([event], endpoints, event.createdAt) };
  }

  function record(
    projectId: string,
    type: EventType,
    now: Date,
    keys: Pick<EventRecord, 'mailingRef' | 'deliveryId' | 'address'>,
    data: Omit<EventData, 'event_id' | 'project_id'>,
  ): EventRecord {
    const id = newId('evt', now.getTime());
    return {
      id,
      projectId,
      type,
      ...keys,
      data: { event_id: id, project_id: projectId, ...data },
      createdAt: now,
    };
  }

  return {
    async forDelivery(delivery, mailing, outcome) {
      const type = deliveryEventType(outcome);
      if (type === undefined) return undefined;
      // An outcome that gives the claim's attempt back reports the attempts as stored after it.
      const attempts = delivery.attempts - (outcome.uncounted && outcome.status !== 'queued' ? 1 : 0);
      const data: Omit<EventData, 'event_id' | 'project_id'> = {
        ...deliveryEventData({ ...delivery, attempts }, mailing),
        response: outcome.lastResponse ?? null,
        error: outcome.lastError ?? null,
      };
      if (type === 'email.delivery_delayed' && outcome.nextAttemptAt) {
        data.next_attempt_at = outcome.nextAttemptAt.toISOString();
      }
      if (type === 'email.suppressed')
        data.reason = outcome.status === 'skipped' ? 'unsubscribed' : 'suppressed';
      const event = record(
        delivery.projectId,
        type,
        outcome.now,
        { mailingRef: mailing.ref, deliveryId: delivery.id, address: delivery.address },
        data,
      );
      return write(event);
    },
    forMailing(type, mailing, now, extra = {}) {
      return write(
        record(
          mailing.projectId,
          type,
          now,
          { mailingRef: mailing.ref, deliveryId: null, address: null },
          { mailing: { ref: mailing.ref, kind: mailing.kind }, ...extra },
        ),
      );
    },
    event(projectId, type, now, keys, data, only) {
      return write(record(projectId, type, now, keys, data), only);
    },
    invalidate(projectId) {
      cache.delete(projectId);
    },
  };
}

/** The `mailing` and `delivery` members of an event about one delivery. */
export function deliveryEventData(
  delivery: DeliveryRecord,
  mailing: Pick<MailingRecord, 'ref' | 'kind'> | undefined,
): Pick<EventData, 'mailing' | 'delivery'> {
  return {
    ...(mailing ? { mailing: { ref: mailing.ref, kind: mailing.kind } } : {}),
    delivery: {
      id: delivery.id,
      message_id: delivery.messageId,
      address: delivery.address,
      attempts: delivery.attempts,
    },
  };
}

/**
 * The event of a delivery outcome: none for a hand-back at shutdown (`queued` without an error) or a
 * sandbox skip, which are not news to the app.
 */
export function deliveryEventType(outcome: DeliveryOutcome): EventType | undefined {
  switch (outcome.status) {
    case 'sent':
      return 'email.sent';
    case 'failed':
      return 'email.failed';
    // Its `email.bounced` (with the bounce's class and diagnostic) is added by the pipeline.
    case 'bounced':
      return undefined;
    case 'suppressed':
      return 'email.suppressed';
    case 'queued':
      // A delivery put back unattempted (its destination at its limit) was not delayed by a failure.
      return outcome.lastError && !outcome.uncounted ? 'email.delivery_delayed' : undefined;
    case 'skipped':
      return outcome.lastError === 'unsubscribed' ? 'email.suppressed' : undefined;
    default:
      return undefined;
  }
}

/**
 * The claim priority of an event's webhook messages: 1 for the events of a broadcast's deliveries, else 0
 * (single messages, contacts, mailings as a whole, tests), which are claimed first.
 */
export function webhookPriority(event: Pick<EventRecord, 'data'>): WebhookPriority {
  return event.data.mailing?.kind === 'broadcast' && event.data.delivery !== undefined ? 1 : 0;
}

/** The public form of an event: `GET /events` and the webhook body. */
export interface EventPayload {
  type: EventType;
  /** ISO 8601. */
  created_at: string;
  data: EventData;
}

/** An event record's public form. */
export function eventPayload(event: EventRecord): EventPayload {
  return { type: event.type, created_at: event.createdAt.toISOString(), data: event.data };
}
