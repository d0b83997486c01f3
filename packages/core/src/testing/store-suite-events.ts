/** Store conformance: the event outbox (written with its change) and the webhook queue. */
import { describe, expect, it } from 'vitest';
import type {
  ClaimedWebhookMessage,
  EventRecord,
  EventType,
  OutboxWrite,
  WebhookAttemptRecord,
  WebhookEndpointRecord,
  WebhookMessageRecord,
  WebhookPriority,
} from '../store/event-records.js';
import type { ClaimedDelivery } from '../store/records.js';
import type { Store } from '../store/store.js';
import { testId, testTime } from './store-fixtures.js';
import {
  addresses,
  completeOne,
  findWebhookMessage,
  type StoreSuiteContext,
  seedMailing,
  seedProject,
} from './store-suite-helpers.js';

const LEASE = 60_000;

let sequence = 0;

/** An event id that sorts after every earlier one of the test. */
function eventId(): string {
  sequence += 1;
  return `evt_${String(sequence).padStart(8, '0')}`;
}

/** A test event. */
export function makeEvent(projectId: string, overrides: Partial<EventRecord> = {}): EventRecord {
  const id = overrides.id ?? eventId();
  return {
    id,
    projectId,
    type: 'email.sent',
    mailingRef: null,
    deliveryId: null,
    address: null,
    data: { event_id: id, project_id: projectId, response: '250 ok ç' },
    createdAt: testTime(),
    ...overrides,
  };
}

/** A test webhook endpoint. */
export function makeEndpoint(
  projectId: string,
  overrides: Partial<WebhookEndpointRecord> = {},
): WebhookEndpointRecord {
  return {
    id: testId('wh'),
    projectId,
    url: 'https://hooks.example.com/mailroom',
    events: null,
    secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0',
    enabled: true,
    disabledReason: null,
    failingSince: null,
    circuitOpenUntil: null,
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** A pending webhook message of `event` to `endpointId`. */
export function makeWebhookMessage(
  event: EventRecord,
  endpointId: string,
  overrides: Partial<WebhookMessageRecord> = {},
): WebhookMessageRecord {
  return {
    id: testId('msg'),
    projectId: event.projectId,
    endpointId,
    eventId: event.id,
    eventType: event.type,
    payload: JSON.stringify({
      type: event.type,
      created_at: event.createdAt.toISOString(),
      data: event.data,
    }),
    priority: 0,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: testTime(),
    leaseExpiresAt: null,
    leaseToken: 0,
    lastStatusCode: null,
    lastError: null,
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** An outbox of one event and one message per endpoint id. */
function outboxOf(event: EventRecord, endpointIds: string[], at = testTime()): OutboxWrite {
  return {
    events: [event],
    messages: endpointIds.map((id) => makeWebhookMessage(event, id, { nextAttemptAt: at, createdAt: at })),
  };
}

function attemptOf(message: WebhookMessageRecord, statusCode: number | null, at: Date): WebhookAttemptRecord {
  return {
    id: testId('wha'),
    projectId: message.projectId,
    endpointId: message.endpointId,
    messageId: message.id,
    eventType: message.eventType,
    attempt: message.attempts,
    statusCode,
    latencyMs: 12,
    error: statusCode === null ? 'connection refused' : null,
    createdAt: at,
  };
}

async function allEvents(store: Store, projectId: string): Promise<EventRecord[]> {
  return store.listEvents(projectId, {}, { limit: 1000 });
}

/**
 * Registers the tests of the event and webhook primitives; with `connect` (a second store on the same
 * backend, as another process), also the race of webhook claims between processes.
 */
export function describeEvents(
  ctx: StoreSuiteContext,
  connect?: (store: Store) => Promise<Store> | Store,
): void {
  describe('event outbox', () => {
    it('an outcome writes its events and messages only when its fenced write happens', async () => {
      const { project, deliveries } = await seedMailing(ctx.store, { addresses: addresses(3) });
      const endpoint = makeEndpoint(project.id);
      await ctx.store.addWebhookEndpoint(endpoint);
      const claimed = await ctx.store.claimDeliveries({ now: testTime(), limit: 10, leaseMs: LEASE });
      expect(claimed).toHaveLength(3);
      const [a, b, c] = claimed as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery];
      const events = claimed.map((d) => makeEvent(project.id, { deliveryId: d.id, address: d.address }));
      const outcome = (i: number) => ({
        status: 'sent' as const,
        sentAt: testTime(5),
        now: testTime(5),
        outbox: outboxOf(events[i] as EventRecord, [endpoint.id]),
      });
      const written = await ctx.store.completeDeliveries([
        { id: a.id, leaseToken: a.leaseToken, outcome: outcome(0) },
        { id: b.id, leaseToken: b.leaseToken + 1, outcome: outcome(1) },
      ]);
      expect(written).toEqual([true, false]);
      expect(await completeOne(ctx.store, c, outcome(2))).toBe(true);
      const stored = await allEvents(ctx.store, project.id);
      expect(stored.map((e) => e.id)).toEqual([events[0]?.id, events[2]?.id]);
      expect(stored[0]).toEqual(events[0]);
      const queued = await ctx.store.claimWebhookMessages({ now: testTime(10), limit: 10, leaseMs: LEASE });
      expect(queued.map((m) => m.eventId).sort()).toEqual([events[0]?.id, events[2]?.id].sort());
      expect(deliveries).toHaveLength(3);
    });

    it('a status change writes its outbox only when it changes the status', async () => {
      const { project, mailing } = await seedMailing(ctx.store);
      const cancelled = makeEvent(project.id, { type: 'broadcast.cancelled', mailingRef: mailing.ref });
      const again = makeEvent(project.id, { type: 'broadcast.cancelled', mailingRef: mailing.ref });
      expect(
        await ctx.store.setMailingStatus(
          mailing.id,
          ['queued'],
          'cancelled',
          testTime(1),
          outboxOf(cancelled, []),
        ),
      ).toBe(true);
      expect(
        await ctx.store.setMailingStatus(
          mailing.id,
          ['queued'],
          'cancelled',
          testTime(2),
          outboxOf(again, []),
        ),
      ).toBe(false);
      expect((await allEvents(ctx.store, project.id)).map((e) => e.id)).toEqual([cancelled.id]);
    });

    it('completeMailingIfSettled writes its outbox only when it completes the mailing', async () => {
      const { project, mailing } = await seedMailing(ctx.store, { addresses: addresses(1) });
      const early = makeEvent(project.id, { type: 'broadcast.completed', mailingRef: mailing.ref });
      expect(await ctx.store.completeMailingIfSettled(mailing.id, testTime(1), outboxOf(early, []))).toBe(
        false,
      );
      const [d] = await ctx.store.claimDeliveries({ now: testTime(), limit: 1, leaseMs: LEASE });
      if (!d) throw new Error('expected a claim');
      await completeOne(ctx.store, d, { status: 'sent', now: testTime(2) });
      const done = makeEvent(project.id, { type: 'broadcast.completed', mailingRef: mailing.ref });
      expect(await ctx.store.completeMailingIfSettled(mailing.id, testTime(3), outboxOf(done, []))).toBe(
        true,
      );
      expect((await allEvents(ctx.store, project.id)).map((e) => e.id)).toEqual([done.id]);
    });

    it('setProfileStatus writes its outbox with the change', async () => {
      const { project } = await seedProject(ctx.store);
      const event = makeEvent(project.id, { type: 'contact.unsubscribed', address: 'a@example.com' });
      await ctx.store.setProfileStatus(
        project.id,
        'a@example.com',
        'unsubscribed',
        testTime(),
        outboxOf(event, []),
      );
      expect((await ctx.store.getProfile(project.id, 'a@example.com'))?.status).toBe('unsubscribed');
      expect(await allEvents(ctx.store, project.id)).toEqual([event]);
    });

    it('listEvents pages by id and filters by type, mailing, address and delivery, within the project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const types: EventType[] = [
        'email.sent',
        'email.failed',
        'email.sent',
        'contact.unsubscribed',
        'email.sent',
      ];
      const events = types.map((type, i) =>
        makeEvent(project.id, {
          type,
          mailingRef: i < 3 ? 'bc_one' : null,
          address: `r${i % 2}@example.com`,
          deliveryId: i === 2 ? 'dlv_two' : null,
        }),
      );
      await ctx.store.insertOutbox({ events: [...events].reverse(), messages: [] });
      await ctx.store.insertOutbox({ events: [makeEvent(other.id)], messages: [] });
      const ids = (rows: EventRecord[]) => rows.map((e) => e.id);
      const page1 = await ctx.store.listEvents(project.id, {}, { limit: 2 });
      expect(ids(page1)).toEqual(ids(events.slice(0, 2)));
      const page2 = await ctx.store.listEvents(project.id, {}, { limit: 10, after: page1[1]?.id ?? null });
      expect(ids(page2)).toEqual(ids(events.slice(2)));
      const sent = await ctx.store.listEvents(project.id, { types: ['email.sent'] }, { limit: 10 });
      expect(ids(sent)).toEqual(ids([events[0], events[2], events[4]] as EventRecord[]));
      const two = await ctx.store.listEvents(
        project.id,
        { types: ['email.failed', 'contact.unsubscribed'] },
        { limit: 10 },
      );
      expect(ids(two)).toEqual(ids([events[1], events[3]] as EventRecord[]));
      const ofMailing = await ctx.store.listEvents(
        project.id,
        { mailingRef: 'bc_one', address: 'r0@example.com' },
        { limit: 10 },
      );
      expect(ids(ofMailing)).toEqual(ids([events[0], events[2]] as EventRecord[]));
      const ofDelivery = await ctx.store.listEvents(project.id, { deliveryId: 'dlv_two' }, { limit: 10 });
      expect(ids(ofDelivery)).toEqual([events[2]?.id]);
    });
  });

  describe('webhook endpoints', () => {
    it('adds, lists, updates and removes endpoints within their project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const first = makeEndpoint(project.id, { events: ['email.sent', 'email.bounced'] });
      const second = makeEndpoint(project.id, { createdAt: testTime(1), updatedAt: testTime(1) });
      await ctx.store.addWebhookEndpoint(first);
      await ctx.store.addWebhookEndpoint(second);
      await ctx.store.addWebhookEndpoint(makeEndpoint(other.id));
      expect(await ctx.store.listWebhookEndpoints(project.id)).toEqual([first, second]);
      expect(await ctx.store.getWebhookEndpoint(first.id)).toEqual(first);
      expect(await ctx.store.updateWebhookEndpoint(other.id, first.id, { enabled: false }, testTime(5))).toBe(
        false,
      );
      expect(
        await ctx.store.updateWebhookEndpoint(
          project.id,
          first.id,
          { enabled: false, disabledReason: 'by hand', secret: 'whsec_bmV3', events: null },
          testTime(5),
        ),
      ).toBe(true);
      expect(await ctx.store.getWebhookEndpoint(first.id)).toEqual({
        ...first,
        enabled: false,
        disabledReason: 'by hand',
        secret: 'whsec_bmV3',
        events: null,
        updatedAt: testTime(5),
      });
      expect(await ctx.store.removeWebhookEndpoint(other.id, second.id)).toBe(false);
      expect(await ctx.store.removeWebhookEndpoint(project.id, second.id)).toBe(true);
      expect(await ctx.store.removeWebhookEndpoint(project.id, second.id)).toBe(false);
      expect((await ctx.store.listWebhookEndpoints(project.id)).map((e) => e.id)).toEqual([first.id]);
    });

    it('records health: the first failure of a run is kept, a success clears it', async () => {
      const { project } = await seedProject(ctx.store);
      const endpoint = makeEndpoint(project.id);
      await ctx.store.addWebhookEndpoint(endpoint);
      expect(await ctx.store.setWebhookEndpointHealth(endpoint.id, testTime(10))).toEqual(testTime(10));
      expect(await ctx.store.setWebhookEndpointHealth(endpoint.id, testTime(20))).toEqual(testTime(10));
      expect((await ctx.store.getWebhookEndpoint(endpoint.id))?.failingSince).toEqual(testTime(10));
      expect(await ctx.store.setWebhookEndpointHealth(endpoint.id, null)).toBeNull();
      expect(await ctx.store.setWebhookEndpointHealth(endpoint.id, testTime(30))).toEqual(testTime(30));
      expect(await ctx.store.setWebhookEndpointHealth('wh_missing', null)).toBeUndefined();
    });
  });

  describe('webhook queue', () => {
    async function seedMessages(count: number, at: (i: number) => Date = (i) => testTime(i)) {
      const { project } = await seedProject(ctx.store);
      const endpoint = makeEndpoint(project.id);
      await ctx.store.addWebhookEndpoint(endpoint);
      const events = Array.from({ length: count }, () => makeEvent(project.id));
      const messages = events.map((e, i) =>
        makeWebhookMessage(e, endpoint.id, { nextAttemptAt: at(i), createdAt: testTime(i) }),
      );
      await ctx.store.insertOutbox({ events, messages });
      return { project, endpoint, events, messages };
    }

    it('claims due messages oldest first, leases them, and reclaims expired leases', async () => {
      const { messages } = await seedMessages(4, (i) => testTime([300, -100, 0, 50][i]));
      const first = await ctx.store.claimWebhookMessages({ now: testTime(0), limit: 5, leaseMs: LEASE });
      expect(first.map((m) => m.id)).toEqual([messages[1]?.id, messages[2]?.id]);
      expect(first[0]).toMatchObject({
        status: 'sending',
        attempts: 1,
        leaseToken: 1,
        leaseExpiresAt: testTime(LEASE),
        payload: messages[1]?.payload,
      });
      expect(await ctx.store.claimWebhookMessages({ now: testTime(10), limit: 5, leaseMs: LEASE })).toEqual(
        [],
      );
      const later = await ctx.store.claimWebhookMessages({ now: testTime(LEASE), limit: 5, leaseMs: LEASE });
      expect(later.map((m) => [m.id, m.leaseToken, m.attempts])).toEqual([
        [messages[1]?.id, 2, 2],
        [messages[2]?.id, 2, 2],
        [messages[3]?.id, 1, 1],
        [messages[0]?.id, 1, 1],
      ]);
      expect(await ctx.store.webhookQueueState()).toEqual({
        oldestPendingAt: testTime(0),
        nextDueAt: undefined,
      });
    });

    it('claims priority 0 before priority 1, each oldest first, and keeps the priority', async () => {
      const { project } = await seedProject(ctx.store);
      const endpoint = makeEndpoint(project.id);
      await ctx.store.addWebhookEndpoint(endpoint);
      // Broadcast events (priority 1) due long before two events of single messages (priority 0).
      const spec: Array<[WebhookPriority, number]> = [
        [1, -500],
        [1, -400],
        [0, -10],
        [1, -300],
        [0, -20],
      ];
      const events = spec.map(() => makeEvent(project.id));
      const messages = events.map((e, i) =>
        makeWebhookMessage(e, endpoint.id, {
          priority: spec[i]?.[0],
          nextAttemptAt: testTime(spec[i]?.[1]),
          createdAt: testTime(spec[i]?.[1]),
        }),
      );
      await ctx.store.insertOutbox({ events, messages });
      const first = await ctx.store.claimWebhookMessages({ now: testTime(0), limit: 3, leaseMs: LEASE });
      expect(first.map((m) => [m.id, m.priority])).toEqual([
        [messages[4]?.id, 0],
        [messages[2]?.id, 0],
        [messages[0]?.id, 1],
      ]);
      const rest = await ctx.store.claimWebhookMessages({ now: testTime(0), limit: 5, leaseMs: LEASE });
      expect(rest.map((m) => m.id)).toEqual([messages[1]?.id, messages[3]?.id]);
      expect((await findWebhookMessage(ctx.store, project.id, messages[1]?.id ?? ''))?.priority).toBe(1);
    });

    it('a claim of one priority takes only messages of that priority', async () => {
      const { project } = await seedProject(ctx.store);
      const endpoint = makeEndpoint(project.id);
      await ctx.store.addWebhookEndpoint(endpoint);
      const messages = ([1, 0, 1, 0] as const).map((priority, i) =>
        makeWebhookMessage(makeEvent(project.id), endpoint.id, { priority, nextAttemptAt: testTime(i) }),
      );
      await ctx.store.insertOutbox({ events: [], messages });
      const urgent = await ctx.store.claimWebhookMessages({
        now: testTime(100),
        limit: 10,
        leaseMs: LEASE,
        priority: 0,
      });
      expect(urgent.map((m) => m.id)).toEqual([messages[1]?.id, messages[3]?.id]);
      const rest = await ctx.store.claimWebhookMessages({
        now: testTime(100),
        limit: 10,
        leaseMs: LEASE,
        priority: 1,
      });
      expect(rest.map((m) => m.id)).toEqual([messages[0]?.id, messages[2]?.id]);
    });

    it('a claim leaves the messages of skipped endpoints where they are', async () => {
      const { project, endpoint, messages } = await seedMessages(3);
      const other = makeEndpoint(project.id);
      const third = makeEndpoint(project.id);
      await ctx.store.addWebhookEndpoint(other);
      await ctx.store.addWebhookEndpoint(third);
      const elsewhere = [other, third].map((e, i) =>
        makeWebhookMessage(makeEvent(project.id), e.id, { nextAttemptAt: testTime(10 + i) }),
      );
      await ctx.store.insertOutbox({ events: [], messages: elsewhere });
      const claimed = await ctx.store.claimWebhookMessages({
        now: testTime(100),
        limit: 10,
        leaseMs: LEASE,
        skipEndpoints: [endpoint.id, third.id],
      });
      expect(claimed.map((m) => m.id)).toEqual([elsewhere[0]?.id]);
      const rest = await ctx.store.claimWebhookMessages({
        now: testTime(100),
        limit: 10,
        leaseMs: LEASE,
        skipEndpoints: [],
      });
      expect(rest.map((m) => m.id)).toEqual([...messages.map((m) => m.id), elsewhere[1]?.id]);
    });

    it('an open circuit defers the pending messages of its endpoint only; closing keeps their times', async () => {
      const { project, endpoint, messages } = await seedMessages(4, (i) => testTime([0, 10, 20, 9_000][i]));
      const other = makeEndpoint(project.id);
      await ctx.store.addWebhookEndpoint(other);
      const elsewhere = makeWebhookMessage(makeEvent(project.id), other.id, { nextAttemptAt: testTime(5) });
      await ctx.store.insertOutbox({ events: [], messages: [elsewhere] });
      // One of the endpoint's messages is in flight: its lease is not touched.
      const [inFlight] = await ctx.store.claimWebhookMessages({
        now: testTime(0),
        limit: 1,
        leaseMs: LEASE,
      });
      expect(inFlight?.id).toBe(messages[0]?.id);
      expect(await ctx.store.setWebhookCircuit(endpoint.id, testTime(5_000))).toBe(true);
      expect(await ctx.store.setWebhookCircuit('wh_missing', testTime(5_000))).toBe(false);
      expect((await ctx.store.getWebhookEndpoint(endpoint.id))?.circuitOpenUntil).toEqual(testTime(5_000));
      const due = await ctx.store.claimWebhookMessages({ now: testTime(4_999), limit: 10, leaseMs: LEASE });
      expect(due.map((m) => m.id)).toEqual([elsewhere.id]);
      const find = (i: number) => findWebhookMessage(ctx.store, project.id, messages[i]?.id ?? '');
      expect(await find(0)).toMatchObject({ status: 'sending', nextAttemptAt: testTime(0) });
      expect(await find(1)).toMatchObject({ status: 'pending', nextAttemptAt: testTime(5_000), attempts: 0 });
      expect(await find(2)).toMatchObject({ nextAttemptAt: testTime(5_000) });
      // Due after the circuit's time anyway: left as it was.
      expect(await find(3)).toMatchObject({ nextAttemptAt: testTime(9_000) });
      expect(await ctx.store.setWebhookCircuit(endpoint.id, null)).toBe(true);
      expect((await ctx.store.getWebhookEndpoint(endpoint.id))?.circuitOpenUntil).toBeNull();
      expect(await find(1)).toMatchObject({ nextAttemptAt: testTime(5_000) });
      const later = await ctx.store.claimWebhookMessages({ now: testTime(5_000), limit: 10, leaseMs: LEASE });
      expect(later.map((m) => m.id).sort()).toEqual([messages[1]?.id, messages[2]?.id].sort());
    });

    it('releases claimed messages unsent, fenced: pending again without the claim’s attempt', async () => {
      const { project, messages } = await seedMessages(2);
      const first = await ctx.store.claimWebhookMessages({ now: testTime(5), limit: 5, leaseMs: LEASE });
      const [a, b] = first as [ClaimedWebhookMessage, ClaimedWebhookMessage];
      expect(a.attempts).toBe(1);
      const released = await ctx.store.releaseWebhookMessages([
        { id: a.id, leaseToken: a.leaseToken, nextAttemptAt: testTime(700) },
        { id: b.id, leaseToken: b.leaseToken + 1, nextAttemptAt: testTime(700) },
      ]);
      expect(released).toEqual([true, false]);
      expect(await findWebhookMessage(ctx.store, project.id, a.id)).toMatchObject({
        status: 'pending',
        attempts: 0,
        leaseExpiresAt: null,
        nextAttemptAt: testTime(700),
        leaseToken: a.leaseToken,
      });
      expect(await findWebhookMessage(ctx.store, project.id, b.id)).toMatchObject({ status: 'sending' });
      expect(await ctx.store.listWebhookAttempts(project.id, { limit: 10 })).toEqual([]);
      // Released twice: the fence no longer holds.
      expect(
        await ctx.store.releaseWebhookMessages([
          { id: a.id, leaseToken: a.leaseToken, nextAttemptAt: testTime(700) },
        ]),
      ).toEqual([false]);
      const again = await ctx.store.claimWebhookMessages({ now: testTime(700), limit: 5, leaseMs: LEASE });
      expect(again.map((m) => [m.id, m.attempts])).toEqual([[messages[0]?.id, 1]]);
    });

    it('concurrent claims never hand one message to two claimers', async () => {
      await seedMessages(60);
      const claims = await Promise.all(
        Array.from({ length: ctx.concurrency }, () =>
          ctx.store.claimWebhookMessages({ now: testTime(100), limit: 7, leaseMs: LEASE }),
        ),
      );
      const ids = claims.flat().map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it.skipIf(connect === undefined)(
      'claims from several processes are disjoint and cover every message (skipped without `connect`)',
      async () => {
        const other = await (connect as (store: Store) => Promise<Store> | Store)(ctx.store);
        try {
          await other.init();
          const { messages } = await seedMessages(120);
          const stores = [ctx.store, other];
          const batches = await Promise.all(
            Array.from({ length: ctx.concurrency }, (_, i) =>
              (stores[i % 2] as Store).claimWebhookMessages({
                now: testTime(1_000),
                limit: Math.ceil(240 / ctx.concurrency),
                leaseMs: LEASE,
              }),
            ),
          );
          const ids = batches.flat().map((m) => m.id);
          expect(new Set(ids).size).toBe(ids.length);
          expect(ids.sort()).toEqual(messages.map((m) => m.id).sort());
        } finally {
          await other.close();
        }
      },
    );

    it('completes fenced by the lease token, recording the attempt only when written', async () => {
      const { project, endpoint, messages } = await seedMessages(3);
      const claimed = await ctx.store.claimWebhookMessages({ now: testTime(5), limit: 5, leaseMs: LEASE });
      const [a, b, c] = claimed as [ClaimedWebhookMessage, ClaimedWebhookMessage, ClaimedWebhookMessage];
      const written = await ctx.store.completeWebhookMessages([
        {
          id: a.id,
          leaseToken: a.leaseToken,
          outcome: { status: 'delivered', statusCode: 204, error: null, now: testTime(5) },
          attempt: attemptOf(a, 204, testTime(5)),
        },
        {
          id: b.id,
          leaseToken: b.leaseToken,
          outcome: {
            status: 'pending',
            nextAttemptAt: testTime(5_000),
            statusCode: 500,
            error: 'HTTP 500',
            now: testTime(6),
          },
          attempt: attemptOf(b, 500, testTime(6)),
        },
        {
          id: c.id,
          leaseToken: c.leaseToken + 1,
          outcome: { status: 'failed', statusCode: null, error: 'x', now: testTime(7) },
          attempt: attemptOf(c, null, testTime(7)),
        },
      ]);
      expect(written).toEqual([true, true, false]);
      expect(await findWebhookMessage(ctx.store, project.id, a.id)).toMatchObject({
        status: 'delivered',
        lastStatusCode: 204,
        leaseExpiresAt: null,
        updatedAt: testTime(5),
      });
      expect(await findWebhookMessage(ctx.store, project.id, b.id)).toMatchObject({
        status: 'pending',
        nextAttemptAt: testTime(5_000),
        lastStatusCode: 500,
        lastError: 'HTTP 500',
      });
      const attempts = await ctx.store.listWebhookAttempts(project.id, { limit: 10 });
      expect(attempts.map((x) => [x.messageId, x.statusCode])).toEqual([
        [b.id, 500],
        [a.id, 204],
      ]);
      expect(await ctx.store.listWebhookAttempts(project.id, { messageId: a.id, limit: 10 })).toHaveLength(1);
      expect(
        await ctx.store.listWebhookAttempts(project.id, { endpointId: endpoint.id, limit: 1 }),
      ).toHaveLength(1);
      // b is pending again and c still in flight: the oldest of them counts.
      expect(await ctx.store.webhookQueueState()).toEqual({
        oldestPendingAt: testTime(1),
        nextDueAt: testTime(5_000),
      });
      expect(messages).toHaveLength(3);
    });

    it('a group with one message under an expired and a newer lease writes only the newer', async () => {
      const { project } = await seedMessages(1);
      const [first] = await ctx.store.claimWebhookMessages({ now: testTime(5), limit: 5, leaseMs: LEASE });
      const [second] = await ctx.store.claimWebhookMessages({
        now: testTime(5 + LEASE + 1),
        limit: 5,
        leaseMs: LEASE,
      });
      if (!first || !second) throw new Error('expected the message claimed twice');
      expect(second.id).toBe(first.id);
      const written = await ctx.store.completeWebhookMessages([
        {
          id: first.id,
          leaseToken: first.leaseToken,
          outcome: { status: 'delivered', statusCode: 204, error: null, now: testTime(LEASE + 10) },
          attempt: attemptOf(first, 204, testTime(LEASE + 10)),
        },
        {
          id: second.id,
          leaseToken: second.leaseToken,
          outcome: { status: 'failed', statusCode: 410, error: 'HTTP 410', now: testTime(LEASE + 11) },
          attempt: attemptOf(second, 410, testTime(LEASE + 11)),
        },
      ]);
      expect(written).toEqual([false, true]);
      expect(await findWebhookMessage(ctx.store, project.id, first.id)).toMatchObject({
        status: 'failed',
        lastStatusCode: 410,
        attempts: 2,
      });
      const attempts = await ctx.store.listWebhookAttempts(project.id, { limit: 10 });
      expect(attempts.map((x) => x.statusCode)).toEqual([410]);
      // Completing again under either lease changes nothing.
      expect(
        await ctx.store.completeWebhookMessages([
          {
            id: second.id,
            leaseToken: second.leaseToken,
            outcome: { status: 'delivered', statusCode: 200, error: null, now: testTime(LEASE + 12) },
            attempt: null,
          },
        ]),
      ).toEqual([false]);
    });

    it('replays a delivered or failed message of the project, never a pending one', async () => {
      const { project, messages } = await seedMessages(2);
      const { project: other } = await seedProject(ctx.store);
      const [a] = await ctx.store.claimWebhookMessages({ now: testTime(5), limit: 1, leaseMs: LEASE });
      if (!a) throw new Error('expected a claim');
      await ctx.store.completeWebhookMessages([
        {
          id: a.id,
          leaseToken: a.leaseToken,
          outcome: { status: 'failed', statusCode: 410, error: 'HTTP 410', now: testTime(5) },
          attempt: null,
        },
      ]);
      const failed = await ctx.store.listWebhookMessages(project.id, { status: 'failed', limit: 10 });
      expect(failed.map((m) => m.id)).toEqual([a.id]);
      expect(await ctx.store.requeueWebhookMessage(other.id, a.id, testTime(9))).toBe(false);
      expect(await ctx.store.requeueWebhookMessage(project.id, messages[1]?.id ?? '', testTime(9))).toBe(
        false,
      );
      expect(await ctx.store.requeueWebhookMessage(project.id, a.id, testTime(9))).toBe(true);
      expect(await ctx.store.requeueWebhookMessage(project.id, a.id, testTime(9))).toBe(false);
      const again = await ctx.store.claimWebhookMessages({ now: testTime(9), limit: 5, leaseMs: LEASE });
      expect(again.map((m) => m.id).sort()).toEqual([a.id, messages[1]?.id].sort());
      expect(again.find((m) => m.id === a.id)?.attempts).toBe(2);
      expect((await ctx.store.listWebhookMessages(project.id, { limit: 10 })).length).toBe(2);
    });
  });
}
