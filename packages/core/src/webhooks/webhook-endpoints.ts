import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import { eventPayload } from '../events/event-outbox.js';
import { EVENT_TYPES, type EventType, type WebhookEndpointRecord } from '../store/event-records.js';
import type { Page } from '../store/paging.js';
import type { WebhookSender } from './webhook-sender.js';
import { newWebhookSecret } from './webhook-signature.js';
import type { EventView, ListEventsOptions, MailroomWebhooks, WebhookEndpointView } from './webhook-types.js';

/** Longest endpoint URL accepted. */
const MAX_URL_LENGTH = 2048;

type ResolveAuth = (auth: string | AuthContext) => Promise<AuthContext>;

/** `mailroom.webhooks`: endpoints of a project, test events, replays and the sent messages. */
export function createWebhooks(
  ctx: BaseContext,
  resolveAuth: ResolveAuth,
  sender: WebhookSender,
): MailroomWebhooks {
  const { store, clock, outbox } = ctx;

  async function endpointOf(auth: string | AuthContext, id: string): Promise<WebhookEndpointRecord> {
    const { project } = await resolveAuth(auth);
    const found = typeof id === 'string' ? await store.getWebhookEndpoint(id) : undefined;
    if (found?.projectId !== project.id)
      throw new MailroomError('NOT_FOUND', `Webhook endpoint ${id} not found`);
    return found;
  }

  return {
    async add(auth, input) {
      const { project } = await resolveAuth(auth);
      const url = await checkEndpointUrl(ctx, input?.url);
      const events = checkEventTypes(input?.events);
      const now = clock.now();
      const secret = newWebhookSecret();
      const endpoint: WebhookEndpointRecord = {
        id: newId('wh', now.getTime()),
        projectId: project.id,
        url,
        events,
        secret,
        enabled: input.enabled ?? true,
        disabledReason: input.enabled === false ? 'disabled when added' : null,
        failingSince: null,
        circuitOpenUntil: null,
        createdAt: now,
        updatedAt: now,
      };
      await store.addWebhookEndpoint(endpoint);
      outbox.invalidate(project.id);
      return { endpoint: endpointView(endpoint), secret };
    },
    async list(auth) {
      const { project } = await resolveAuth(auth);
      return (await store.listWebhookEndpoints(project.id)).map(endpointView);
    },
    async remove(auth, id) {
      const endpoint = await endpointOf(auth, id);
      await store.removeWebhookEndpoint(endpoint.projectId, endpoint.id);
      outbox.invalidate(endpoint.projectId);
      sender.forget(endpoint.id);
    },
    async rotateSecret(auth, id) {
      const endpoint = await endpointOf(auth, id);
      const secret = newWebhookSecret();
      await store.updateWebhookEndpoint(endpoint.projectId, endpoint.id, { secret }, clock.now());
      sender.forget(endpoint.id);
      return { secret };
    },
    async setEnabled(auth, id, enabled) {
      const endpoint = await endpointOf(auth, id);
      const now = clock.now();
      await store.updateWebhookEndpoint(
        endpoint.projectId,
        endpoint.id,
        { enabled, disabledReason: enabled ? null : 'disabled by the user' },
        now,
      );
      if (enabled) {
        // Enabling starts afresh: no failure record, circuit closed.
        await store.setWebhookEndpointHealth(endpoint.id, null);
        await store.setWebhookCircuit(endpoint.id, null);
      }
      outbox.invalidate(endpoint.projectId);
      sender.forget(endpoint.id);
      return endpointView({
        ...endpoint,
        enabled,
        disabledReason: enabled ? null : 'disabled by the user',
        failingSince: enabled ? null : endpoint.failingSince,
        circuitOpenUntil: enabled ? null : endpoint.circuitOpenUntil,
      });
    },
    async sendTest(auth, id) {
      const endpoint = await endpointOf(auth, id);
      const now = clock.now();
      const written = await outbox.event(
        endpoint.projectId,
        'email.sent',
        now,
        { mailingRef: null, deliveryId: null, address: null },
        { test: true, response: '250 test event' },
        endpoint,
      );
      await store.insertOutbox(written);
      sender.wake();
      return { messageId: written.messages[0]?.id ?? '' };
    },
    async replay(auth, messageId) {
      const { project } = await resolveAuth(auth);
      if (!(await store.requeueWebhookMessage(project.id, String(messageId), clock.now()))) {
        throw new MailroomError('NOT_FOUND', `No delivered or failed webhook message ${messageId}`);
      }
      sender.wake();
    },
    async messages(auth, filter = {}) {
      const { project } = await resolveAuth(auth);
      const rows = await store.listWebhookMessages(project.id, {
        ...(filter.endpointId ? { endpointId: filter.endpointId } : {}),
        ...(filter.status ? { status: filter.status } : {}),
        limit: clampLimit(filter.limit, 50, 500),
      });
      return rows.map(({ projectId: _p, leaseToken: _t, leaseExpiresAt: _l, ...view }) => view);
    },
    async attempts(auth, filter = {}) {
      const { project } = await resolveAuth(auth);
      return store.listWebhookAttempts(project.id, {
        ...(filter.endpointId ? { endpointId: filter.endpointId } : {}),
        ...(filter.messageId ? { messageId: filter.messageId } : {}),
        limit: clampLimit(filter.limit, 50, 500),
      });
    },
    drain: () => sender.drain(),
    async queue() {
      await ctx.ready();
      const { oldestPendingAt } = await store.webhookQueueState();
      return {
        oldestPendingAgeMs: oldestPendingAt
          ? Math.max(0, clock.now().getTime() - oldestPendingAt.getTime())
          : null,
      };
    },
  };
}

/** `mailroom.listEvents`: a project's events, oldest first, in pages. */
export async function listEvents(
  ctx: BaseContext,
  auth: AuthContext,
  options: ListEventsOptions = {},
): Promise<Page<EventView>> {
  const limit = clampLimit(options.limit, 100, 1000);
  const types = options.types === undefined ? undefined : checkEventTypes(options.types);
  const rows = await ctx.store.listEvents(
    auth.project.id,
    {
      ...(types ? { types } : {}),
      ...(options.mailingRef ? { mailingRef: options.mailingRef } : {}),
      ...(options.address ? { address: options.address } : {}),
    },
    { after: options.after ?? null, limit: limit + 1 },
  );
  const items = rows.slice(0, limit).map((e) => ({ id: e.id, ...eventPayload(e) }));
  return { items, next: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
}

/** An endpoint without its secret. */
export function endpointView(e: WebhookEndpointRecord): WebhookEndpointView {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    failingSince: e.failingSince,
    circuitOpenUntil: e.circuitOpenUntil,
    state: !e.enabled ? 'disabled' : e.circuitOpenUntil !== null ? 'circuit_open' : 'healthy',
    createdAt: e.createdAt,
  };
}

/** The URL of a new endpoint, refused as the guarded fetcher would refuse to POST to it. */
async function checkEndpointUrl(ctx: BaseContext, url: unknown): Promise<string> {
  if (typeof url !== 'string' || url.length === 0 || url.length > MAX_URL_LENGTH) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      `url must be an http(s) URL of at most ${MAX_URL_LENGTH} characters`,
    );
  }
  await ctx.fetcher.check(url);
  return new URL(url).href;
}

/** Event types as given, checked; null (all types) for none. */
function checkEventTypes(given: unknown): EventType[] | null {
  if (given === undefined || given === null) return null;
  if (!Array.isArray(given) || given.length === 0) {
    throw new MailroomError('VALIDATION_FAILED', 'events must be a non-empty list of event types');
  }
  const unknown = given.filter((t) => !(EVENT_TYPES as readonly unknown[]).includes(t));
  if (unknown.length > 0) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      `Unknown event type ${String(unknown[0])}; the types are ${EVENT_TYPES.join(', ')}`,
    );
  }
  return [...new Set(given as EventType[])];
}

function clampLimit(given: number | undefined, fallback: number, max: number): number {
  const n = Number(given ?? fallback);
  return Number.isInteger(n) && n > 0 ? Math.min(n, max) : fallback;
}
