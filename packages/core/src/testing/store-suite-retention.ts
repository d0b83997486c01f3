/** Store conformance: the RetentionStore role. */
import { describe, expect, it } from 'vitest';
import type {
  ClaimedWebhookMessage,
  EventRecord,
  WebhookMessageRecord,
  WebhookOutcome,
} from '../store/event-records.js';
import { makeIdempotency, testId, testTime } from './store-fixtures.js';
import { makeEndpoint, makeEvent, makeWebhookMessage } from './store-suite-events.js';
import {
  addresses,
  findWebhookMessage,
  type StoreSuiteContext,
  seedMailing,
  seedProject,
} from './store-suite-helpers.js';

const CONTENT = { subject: 'Kept subject', text: 'Kept text', html: '<p>Kept html</p>' };

/** Registers the tests of pruneDeliveryContent, pruneIdempotent and pruneEvents. */
export function describeRetention(ctx: StoreSuiteContext): void {
  describe('pruneDeliveryContent', () => {
    it('clears content written before the cutoff, at most limit rows per call, across projects', async () => {
      const offsets = [-3_000, -2_000, 1_000, -1_000];
      // Created before they were last updated, as every delivery is (a store may bound the sweep by
      // `createdAt` too: PostgreSQL indexes the content kept by it).
      const createdAt = testTime(-10_000);
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(5),
        delivery: (_, i) =>
          i === 4
            ? { status: 'sent', createdAt, updatedAt: testTime(-9_000) }
            : { status: 'sent', content: CONTENT, createdAt, updatedAt: testTime(offsets[i]) },
      });
      const other = await seedMailing(ctx.store, {
        addresses: addresses(1),
        delivery: () => ({ status: 'sent', content: CONTENT, createdAt, updatedAt: testTime(-500) }),
      });
      expect(await ctx.store.pruneDeliveryContent(testTime(0), 2)).toBe(2);
      expect(await ctx.store.pruneDeliveryContent(testTime(0), 2)).toBe(2);
      expect(await ctx.store.pruneDeliveryContent(testTime(0), 2)).toBe(0);
      const rows = await ctx.store.listDeliveries(seeded.mailing.id, { limit: 10 });
      expect(rows.map((d) => d.content)).toEqual([null, null, CONTENT, null, null]);
      // The sweep leaves updatedAt alone.
      expect(rows.map((d) => d.updatedAt)).toEqual([...offsets, -9_000].map((o) => testTime(o)));
      expect((await ctx.store.listDeliveries(other.mailing.id, { limit: 1 }))[0]?.content).toBeNull();
      expect(await ctx.store.pruneDeliveryContent(testTime(5_000), 0)).toBe(0);
      expect(await ctx.store.pruneDeliveryContent(testTime(5_000), 10)).toBe(1);
    });
  });

  describe('pruneIdempotent', () => {
    it('deletes expired records of every project, at most limit per call', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      for (const [projectId, key, expires] of [
        [project.id, 'a', 500],
        [project.id, 'b', 1_000],
        [other.id, 'a', 900],
        [project.id, 'live', 1_001],
      ] as const) {
        await ctx.store.beginIdempotent(
          makeIdempotency(projectId, key, { expiresAt: testTime(expires) }),
          testTime(0),
        );
      }
      expect(await ctx.store.pruneIdempotent(testTime(1_000), 2)).toBe(2);
      expect(await ctx.store.pruneIdempotent(testTime(1_000), 2)).toBe(1);
      expect(await ctx.store.pruneIdempotent(testTime(1_000), 2)).toBe(0);
      // The live key is still held; the pruned ones are free (begun at a time they would still be live).
      const live = await ctx.store.beginIdempotent(makeIdempotency(project.id, 'live'), testTime(0));
      expect(live.created).toBe(false);
      const freed = await ctx.store.beginIdempotent(makeIdempotency(project.id, 'b'), testTime(0));
      expect(freed.created).toBe(true);
    });
  });

  describe('pruneEvents', () => {
    it('deletes old events, settled webhook messages and attempts of every project, never an open message', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const endpoints = [makeEndpoint(project.id), makeEndpoint(other.id)];
      for (const endpoint of endpoints) await ctx.store.addWebhookEndpoint(endpoint);
      // Events at -3 s, -2 s, -1 s (other project) and +1 s; one message each.
      const at = [-3_000, -2_000, -1_000, 1_000];
      const owners = [project.id, project.id, other.id, project.id];
      const events = at.map((offset, i) =>
        makeEvent(owners[i] as string, { createdAt: testTime(offset), address: `a${i}@example.com` }),
      );
      const messages: WebhookMessageRecord[] = events.map((event, i) =>
        makeWebhookMessage(event, (endpoints[owners[i] === project.id ? 0 : 1] as { id: string }).id, {
          createdAt: testTime(at[i]),
          nextAttemptAt: testTime(at[i]),
          updatedAt: testTime(at[i]),
        }),
      );
      for (let i = 0; i < events.length; i++) {
        await ctx.store.insertOutbox({
          events: [events[i] as EventRecord],
          messages: [messages[i] as WebhookMessageRecord],
        });
      }
      const claimed = await ctx.store.claimWebhookMessages({ now: testTime(0), limit: 10, leaseMs: 60_000 });
      expect(claimed.map((m) => m.id).sort()).toEqual(
        messages
          .slice(0, 3)
          .map((m) => m.id)
          .sort(),
      );
      const byId = new Map(claimed.map((m) => [m.id, m]));
      const [m0, m1, m2, m3] = messages as [
        WebhookMessageRecord,
        WebhookMessageRecord,
        WebhookMessageRecord,
        WebhookMessageRecord,
      ];
      const outcomes: Array<[WebhookMessageRecord, WebhookOutcome]> = [
        [m0, { status: 'delivered', statusCode: 204, error: null, now: testTime(-500) }],
        [m1, { status: 'failed', statusCode: 500, error: 'HTTP 500', now: testTime(-400) }],
        // Still to be retried: kept whatever its age.
        [
          m2,
          {
            status: 'pending',
            statusCode: 500,
            error: 'HTTP 500',
            nextAttemptAt: testTime(60_000),
            now: testTime(-300),
          },
        ],
      ];
      const written = await ctx.store.completeWebhookMessages(
        outcomes.map(([m, outcome]) => ({
          id: m.id,
          leaseToken: (byId.get(m.id) as ClaimedWebhookMessage).leaseToken,
          outcome,
          attempt: {
            id: testId('wha'),
            projectId: m.projectId,
            endpointId: m.endpointId,
            messageId: m.id,
            eventType: m.eventType,
            attempt: 1,
            statusCode: outcome.statusCode,
            latencyMs: 5,
            error: outcome.error,
            createdAt: outcome.now,
          },
        })),
      );
      expect(written).toEqual([true, true, true]);

      expect(await ctx.store.pruneEvents(testTime(0), 0)).toBe(0);
      // At most 2 of each kind: 2 attempts, 2 settled messages, 2 events; then the rest.
      expect(await ctx.store.pruneEvents(testTime(0), 2)).toBe(6);
      expect(await ctx.store.pruneEvents(testTime(0), 2)).toBe(2);
      expect(await ctx.store.pruneEvents(testTime(0), 2)).toBe(0);

      const left = await ctx.store.listEvents(project.id, {}, { limit: 100 });
      expect(left.map((e) => e.id)).toEqual([events[3]?.id]);
      expect(await ctx.store.listEvents(other.id, {}, { limit: 100 })).toEqual([]);
      expect(await findWebhookMessage(ctx.store, project.id, m0.id)).toBeUndefined();
      expect(await findWebhookMessage(ctx.store, project.id, m1.id)).toBeUndefined();
      expect((await findWebhookMessage(ctx.store, other.id, m2.id))?.status).toBe('pending');
      expect((await findWebhookMessage(ctx.store, project.id, m3.id))?.status).toBe('pending');
      expect(await ctx.store.listWebhookAttempts(project.id, { limit: 100 })).toEqual([]);
      expect(await ctx.store.listWebhookAttempts(other.id, { limit: 100 })).toEqual([]);
      // The open message is still sent: claimed when due, without its (pruned) event.
      const due = await ctx.store.claimWebhookMessages({ now: testTime(60_000), limit: 10, leaseMs: 60_000 });
      expect(due.map((m) => m.id).sort()).toEqual([m2.id, m3.id].sort());
      expect(due.find((m) => m.id === m2.id)?.payload).toBe(m2.payload);
    });
  });
}
