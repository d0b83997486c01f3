/** Store conformance: applying inbound signals (bounces, complaints, delivery reports). */
import { describe, expect, it } from 'vitest';
import type { InboundSignalWrite } from '../store/inbound-signal-store.js';
import type {
  DeliveryRecord,
  InboundSignalKind,
  ProjectRecord,
  SuppressionRecord,
} from '../store/records.js';
import { makeSuppression, testId, testTime } from './store-fixtures.js';
import { makeEndpoint, makeEvent, makeWebhookMessage } from './store-suite-events.js';
import { type StoreSuiteContext, seedMailing, seedProfiles, seedProject } from './store-suite-helpers.js';

/** A reason of each kind, as the core would write it. */
const REASON_OF: Record<InboundSignalKind, string> = {
  'hard-bounce': 'userunknown',
  'soft-bounce': 'mailboxfull',
  'sender-side': 'authfailure',
  complaint: 'feedback',
  delivered: 'delivered',
};

/** Registers the inbound-signal tests. */
export function describeInbound(ctx: StoreSuiteContext): void {
  describe('inbound signals', () => {
    async function sentDelivery(
      addressList: string[] = ['ann@example.com'],
      status: DeliveryRecord['status'] = 'sent',
    ): Promise<{ project: ProjectRecord; deliveries: DeliveryRecord[] }> {
      const seeded = await seedMailing(ctx.store, {
        addresses: addressList,
        delivery: () => ({ status, sentAt: status === 'sent' ? testTime() : null }),
      });
      return { project: seeded.project, deliveries: seeded.deliveries };
    }

    function signal(
      d: DeliveryRecord,
      kind: InboundSignalKind,
      dedupeKey = `${kind}:${d.id}`,
    ): InboundSignalWrite['signal'] {
      return {
        id: testId('sig'),
        projectId: d.projectId,
        mailingId: d.mailingId,
        deliveryId: d.id,
        address: d.address,
        domain: d.address.slice(d.address.lastIndexOf('@') + 1),
        kind,
        source: 'dsn',
        reason: REASON_OF[kind],
        status: kind === 'hard-bounce' ? '5.1.1' : kind === 'soft-bounce' ? '4.2.2' : null,
        diagnostic: kind === 'complaint' ? null : 'smtp; 550 5.1.1 no such user',
        reportedAddress: null,
        reportedMessageId: null,
        dedupeKey,
        createdAt: testTime(1000),
      };
    }

    const suppression = (d: DeliveryRecord, reason: SuppressionRecord['reason']): SuppressionRecord =>
      makeSuppression(d.projectId, d.address, { reason, detail: 'from a DSN', createdAt: testTime(1000) });

    function hardBounce(d: DeliveryRecord): InboundSignalWrite {
      return {
        signal: signal(d, 'hard-bounce'),
        delivery: { status: 'bounced', from: ['sent'], lastError: 'hard bounce: 5.1.1 no such user' },
        suppress: suppression(d, 'hard-bounce'),
        now: testTime(1000),
      };
    }

    it('applies a hard bounce: the delivery becomes bounced, the address suppressed, the signal kept', async () => {
      const { deliveries } = await sentDelivery();
      const d = deliveries[0] as DeliveryRecord;
      const result = await ctx.store.applyInboundSignal(hardBounce(d));
      expect(result).toEqual({ applied: true, deliveryChanged: true, suppressed: true, softBounces: null });
      expect(await ctx.store.getDelivery(d.id)).toMatchObject({
        status: 'bounced',
        lastError: 'hard bounce: 5.1.1 no such user',
        updatedAt: testTime(1000),
      });
      expect(await ctx.store.findSuppressed(d.projectId, [d.address])).toEqual([
        suppression(d, 'hard-bounce'),
      ]);
      const signals = await ctx.store.listInboundSignals(d.id);
      expect(signals).toEqual([hardBounce(d).signal].map((s) => ({ ...s, id: signals[0]?.id })));
      expect((await ctx.store.countDeliveries(d.mailingId)).bounced).toBe(1);
    });

    it('applies a signal once per dedupe key: a repeat writes nothing', async () => {
      const { deliveries } = await sentDelivery();
      const d = deliveries[0] as DeliveryRecord;
      await ctx.store.applyInboundSignal(hardBounce(d));
      await ctx.store.removeSuppression(d.projectId, d.address);
      const again = {
        ...hardBounce(d),
        delivery: { status: 'complained' as const, from: ['bounced' as const], lastError: 'x' },
      };
      expect(await ctx.store.applyInboundSignal(again)).toEqual({
        applied: false,
        deliveryChanged: false,
        suppressed: false,
        softBounces: null,
      });
      expect((await ctx.store.getDelivery(d.id))?.status).toBe('bounced');
      expect(await ctx.store.findSuppressed(d.projectId, [d.address])).toEqual([]);
      expect(await ctx.store.listInboundSignals(d.id)).toHaveLength(1);
    });

    it('changes the delivery only from the given statuses, and keeps an existing suppression', async () => {
      const { deliveries } = await sentDelivery(['ann@example.com'], 'sending');
      const d = deliveries[0] as DeliveryRecord;
      await ctx.store.addSuppression(makeSuppression(d.projectId, d.address, { reason: 'manual' }));
      const result = await ctx.store.applyInboundSignal(hardBounce(d));
      expect(result).toMatchObject({ applied: true, deliveryChanged: false, suppressed: false });
      expect((await ctx.store.getDelivery(d.id))?.status).toBe('sending');
      expect((await ctx.store.findSuppressed(d.projectId, [d.address]))[0]?.reason).toBe('manual');
    });

    it('counts soft bounces in a row per address and suppresses at the limit; a reset starts over', async () => {
      const { deliveries } = await sentDelivery([
        'a@example.com',
        'b@example.com',
        'c@example.com',
        'd@example.com',
      ]);
      const soft = (d: DeliveryRecord, key: string): InboundSignalWrite => ({
        signal: { ...signal(d, 'soft-bounce', key), address: 'same@example.com' },
        softBounce: {
          suppressAt: 3,
          suppression: { ...suppression(d, 'hard-bounce'), address: 'same@example.com' },
        },
        now: testTime(1000),
      });
      const [a, b, c, e] = deliveries as [DeliveryRecord, DeliveryRecord, DeliveryRecord, DeliveryRecord];
      expect(await ctx.store.applyInboundSignal(soft(a, 's1'))).toMatchObject({
        softBounces: 1,
        suppressed: false,
      });
      expect(await ctx.store.applyInboundSignal(soft(b, 's2'))).toMatchObject({
        softBounces: 2,
        suppressed: false,
      });
      expect(await ctx.store.findSuppressed(a.projectId, ['same@example.com'])).toEqual([]);
      expect(await ctx.store.applyInboundSignal(soft(c, 's3'))).toMatchObject({
        softBounces: 3,
        suppressed: true,
      });
      expect(await ctx.store.findSuppressed(a.projectId, ['same@example.com'])).toHaveLength(1);
      const reset: InboundSignalWrite = {
        signal: { ...signal(e, 'delivered', 'd1'), address: 'same@example.com' },
        resetSoftBounces: true,
        now: testTime(1000),
      };
      expect(await ctx.store.applyInboundSignal(reset)).toMatchObject({ applied: true, softBounces: 0 });
      expect(await ctx.store.applyInboundSignal(soft(e, 's4'))).toMatchObject({ softBounces: 1 });
      // Another project's streak of the same address is its own.
      const other = (await seedProject(ctx.store)).project;
      const foreign = soft(a, 's5');
      foreign.signal.projectId = other.id;
      foreign.softBounce = {
        suppressAt: 3,
        suppression: { ...suppression(a, 'hard-bounce'), projectId: other.id },
      };
      expect(await ctx.store.applyInboundSignal(foreign)).toMatchObject({ softBounces: 1 });
    });

    describe('recipient-side soft bounces over a window (mailboxUnavailable)', () => {
      const HOUR = 3_600_000;
      const DAY = 24 * HOUR;
      /** One delivery to `address` in a mailing of its own (a delivery is unique per mailing and address). */
      async function deliveryTo(
        project: ProjectRecord | undefined,
        address: string,
        sentAt: Date = testTime(),
      ): Promise<DeliveryRecord> {
        const seeded = await seedMailing(ctx.store, {
          ...(project ? { project } : {}),
          addresses: [address],
          delivery: () => ({ status: 'sent', sentAt }),
        });
        return seeded.deliveries[0] as DeliveryRecord;
      }
      const bounce = (d: DeliveryRecord, at: number, key = `mu:${d.id}:${at}`): InboundSignalWrite => {
        const now = testTime(at);
        return {
          signal: { ...signal(d, 'soft-bounce', key), reason: 'mailboxfull', createdAt: now },
          mailboxUnavailable: {
            reasons: ['mailboxfull', 'suspend'],
            since: new Date(now.getTime() - 14 * DAY),
            suppressAt: 3,
            suppression: { ...suppression(d, 'mailbox-unavailable'), createdAt: now },
          },
          now,
        };
      };
      const projectOf = async (d: DeliveryRecord) => {
        const project = await ctx.store.getProject(d.projectId);
        if (!project) throw new Error('no project');
        return project;
      };

      it('suppresses at the limit of distinct deliveries within the window, with its own reason', async () => {
        const first = await deliveryTo(undefined, 'full@example.com');
        const project = await projectOf(first);
        const second = await deliveryTo(project, 'full@example.com');
        const third = await deliveryTo(project, 'full@example.com');
        // A bounce older than the window does not count.
        const old = await deliveryTo(project, 'full@example.com');
        expect(await ctx.store.applyInboundSignal(bounce(old, HOUR))).toMatchObject({
          mailboxUnavailable: 1,
        });
        const start = 20 * DAY;
        expect(await ctx.store.applyInboundSignal(bounce(first, start))).toMatchObject({
          applied: true,
          mailboxUnavailable: 1,
          suppressed: false,
        });
        // A second report about the same delivery is not a second bounce.
        expect(await ctx.store.applyInboundSignal(bounce(first, start + HOUR, 'again'))).toMatchObject({
          mailboxUnavailable: 1,
          suppressed: false,
        });
        expect(await ctx.store.applyInboundSignal(bounce(second, start + DAY))).toMatchObject({
          mailboxUnavailable: 2,
          suppressed: false,
        });
        expect(await ctx.store.findSuppressed(project.id, ['full@example.com'])).toEqual([]);
        expect(await ctx.store.applyInboundSignal(bounce(third, start + 13 * DAY))).toMatchObject({
          mailboxUnavailable: 3,
          suppressed: true,
        });
        const [row] = await ctx.store.findSuppressed(project.id, ['full@example.com']);
        expect(row?.reason).toBe('mailbox-unavailable');
        // Another project's bounces of the same address are its own.
        const foreign = await deliveryTo(undefined, 'full@example.com');
        expect(await ctx.store.applyInboundSignal(bounce(foreign, start + 13 * DAY))).toMatchObject({
          mailboxUnavailable: 1,
          suppressed: false,
        });
      });

      it('starts over after a delivery accepted in between, or a delivery report', async () => {
        const first = await deliveryTo(undefined, 'busy@example.com');
        const project = await projectOf(first);
        const second = await deliveryTo(project, 'busy@example.com');
        const third = await deliveryTo(project, 'busy@example.com');
        const fourth = await deliveryTo(project, 'busy@example.com');
        expect(await ctx.store.applyInboundSignal(bounce(first, 2 * HOUR))).toMatchObject({
          mailboxUnavailable: 1,
        });
        // Accepted after the first bounce, and never bounced.
        await deliveryTo(project, 'busy@example.com', testTime(3 * HOUR));
        expect(await ctx.store.applyInboundSignal(bounce(second, 4 * HOUR))).toMatchObject({
          mailboxUnavailable: 1,
        });
        expect(await ctx.store.applyInboundSignal(bounce(third, 5 * HOUR))).toMatchObject({
          mailboxUnavailable: 2,
          suppressed: false,
        });
        // A positive delivery report starts the count over too.
        const report = await deliveryTo(project, 'busy@example.com');
        await ctx.store.applyInboundSignal({
          signal: { ...signal(report, 'delivered', `dr:${report.id}`), createdAt: testTime(6 * HOUR) },
          now: testTime(6 * HOUR),
        });
        expect(await ctx.store.applyInboundSignal(bounce(fourth, 7 * HOUR))).toMatchObject({
          mailboxUnavailable: 1,
          suppressed: false,
        });
        expect(await ctx.store.findSuppressed(project.id, ['busy@example.com'])).toEqual([]);
      });
    });

    it('applies a complaint: complained, suppressed and the profile unsubscribed (created when absent)', async () => {
      const { deliveries } = await sentDelivery(['ann@example.com', 'bob@example.com']);
      const [ann, bob] = deliveries as [DeliveryRecord, DeliveryRecord];
      await seedProfiles(
        ctx.store,
        ann.projectId,
        [{ address: ann.address, name: 'Ann' }],
        {
          onExistingTrait: 'preserve',
          onExistingProfile: 'preserve',
        },
        testTime(),
      );
      for (const d of [ann, bob]) {
        const result = await ctx.store.applyInboundSignal({
          signal: signal(d, 'complaint'),
          delivery: { status: 'complained', from: ['sent', 'bounced'], lastError: 'complaint: abuse' },
          suppress: suppression(d, 'complaint'),
          unsubscribe: true,
          now: testTime(2000),
        });
        expect(result).toMatchObject({ applied: true, deliveryChanged: true, suppressed: true });
        expect((await ctx.store.getDelivery(d.id))?.status).toBe('complained');
        expect(await ctx.store.getProfile(d.projectId, d.address)).toMatchObject({
          status: 'unsubscribed',
          updatedAt: testTime(2000),
        });
      }
      expect((await ctx.store.getProfile(ann.projectId, ann.address))?.name).toBe('Ann');
      expect((await ctx.store.countDeliveries(ann.mailingId)).complained).toBe(2);
    });

    it('writes its outbox (events and webhook messages) with the signal, and none for a repeat', async () => {
      const { deliveries } = await sentDelivery();
      const d = deliveries[0] as DeliveryRecord;
      const endpoint = makeEndpoint(d.projectId);
      await ctx.store.addWebhookEndpoint(endpoint);
      const event = makeEvent(d.projectId, { type: 'email.bounced', deliveryId: d.id, address: d.address });
      const outbox = { events: [event], messages: [makeWebhookMessage(event, endpoint.id)] };
      await ctx.store.applyInboundSignal({ ...hardBounce(d), outbox });
      const again = makeEvent(d.projectId, { type: 'email.bounced', deliveryId: d.id, address: d.address });
      const repeat = { events: [again], messages: [makeWebhookMessage(again, endpoint.id)] };
      expect((await ctx.store.applyInboundSignal({ ...hardBounce(d), outbox: repeat })).applied).toBe(false);
      const events = await ctx.store.listEvents(d.projectId, {}, { after: null, limit: 10 });
      expect(events).toEqual([event]);
      const claimed = await ctx.store.claimWebhookMessages({
        now: testTime(5000),
        limit: 10,
        leaseMs: 60_000,
      });
      expect(claimed.map((m) => m.eventId)).toEqual([event.id]);
    });

    it('keeps a sender-side signal with what the report named; the address stays unsuppressed', async () => {
      const { deliveries } = await sentDelivery();
      const d = deliveries[0] as DeliveryRecord;
      const write: InboundSignalWrite = {
        signal: {
          ...signal(d, 'sender-side'),
          status: '5.7.26',
          diagnostic: 'smtp; 550 5.7.26 DMARC policy',
          reportedAddress: 'alias@example.net',
          reportedMessageId: '<other@relay.example>',
        },
        delivery: { status: 'bounced', from: ['sent'], lastError: 'sender-side bounce: 5.7.26' },
        now: testTime(1000),
      };
      expect(await ctx.store.applyInboundSignal(write)).toEqual({
        applied: true,
        deliveryChanged: true,
        suppressed: false,
        softBounces: null,
      });
      const [kept] = await ctx.store.listInboundSignals(d.id);
      expect(kept).toEqual({ ...write.signal, id: kept?.id });
      expect(await ctx.store.findSuppressed(d.projectId, [d.address])).toEqual([]);
    });

    it('counts signals by kind, domain and reason, filtered by project, mailing, domain and time', async () => {
      const first = await sentDelivery(['a@gmail.test', 'b@gmail.test', 'c@yahoo.test', 'd@gmail.test']);
      const [a, b, c, e] = first.deliveries as [
        DeliveryRecord,
        DeliveryRecord,
        DeliveryRecord,
        DeliveryRecord,
      ];
      const second = await seedMailing(ctx.store, {
        project: first.project,
        addresses: ['f@gmail.test'],
        delivery: () => ({ status: 'sent', sentAt: testTime() }),
      });
      const f = second.deliveries[0] as DeliveryRecord;
      const other = await sentDelivery(['g@gmail.test']);
      const g = other.deliveries[0] as DeliveryRecord;
      const apply = (d: DeliveryRecord, kind: InboundSignalKind, reason: string | null, at: number) =>
        ctx.store.applyInboundSignal({
          signal: { ...signal(d, kind), reason, createdAt: testTime(at) },
          now: testTime(at),
        });
      await apply(a, 'sender-side', 'authfailure', 1000);
      await apply(b, 'sender-side', 'authfailure', 2000);
      await apply(c, 'sender-side', 'blocked', 3000);
      await apply(e, 'hard-bounce', 'userunknown', 4000);
      await apply(f, 'sender-side', null, 5000);
      await apply(g, 'sender-side', 'authfailure', 6000);
      const projectId = first.project.id;
      expect(await ctx.store.countInboundSignals({ projectId, kinds: ['sender-side'] })).toEqual([
        { kind: 'sender-side', domain: 'gmail.test', reason: 'authfailure', count: 2 },
        { kind: 'sender-side', domain: 'gmail.test', reason: null, count: 1 },
        { kind: 'sender-side', domain: 'yahoo.test', reason: 'blocked', count: 1 },
      ]);
      expect(
        await ctx.store.countInboundSignals({ projectId, kinds: ['sender-side', 'hard-bounce'] }),
      ).toEqual([
        { kind: 'sender-side', domain: 'gmail.test', reason: 'authfailure', count: 2 },
        { kind: 'hard-bounce', domain: 'gmail.test', reason: 'userunknown', count: 1 },
        { kind: 'sender-side', domain: 'gmail.test', reason: null, count: 1 },
        { kind: 'sender-side', domain: 'yahoo.test', reason: 'blocked', count: 1 },
      ]);
      expect(
        await ctx.store.countInboundSignals({ projectId, kinds: ['sender-side'], mailingId: a.mailingId }),
      ).toEqual([
        { kind: 'sender-side', domain: 'gmail.test', reason: 'authfailure', count: 2 },
        { kind: 'sender-side', domain: 'yahoo.test', reason: 'blocked', count: 1 },
      ]);
      expect(
        await ctx.store.countInboundSignals({ projectId, kinds: ['sender-side'], domain: 'yahoo.test' }),
      ).toEqual([{ kind: 'sender-side', domain: 'yahoo.test', reason: 'blocked', count: 1 }]);
      expect(
        await ctx.store.countInboundSignals({ projectId, kinds: ['sender-side'], since: testTime(2000) }),
      ).toEqual([
        { kind: 'sender-side', domain: 'gmail.test', reason: null, count: 1 },
        { kind: 'sender-side', domain: 'gmail.test', reason: 'authfailure', count: 1 },
        { kind: 'sender-side', domain: 'yahoo.test', reason: 'blocked', count: 1 },
      ]);
      expect(await ctx.store.countInboundSignals({ projectId, kinds: [] })).toEqual([]);
      expect(await ctx.store.countInboundSignals({ projectId, kinds: ['complaint'] })).toEqual([]);
    });

    it('race: of concurrent signals with one key exactly one applies', async () => {
      const { deliveries } = await sentDelivery();
      const d = deliveries[0] as DeliveryRecord;
      const results = await Promise.all(
        Array.from({ length: ctx.concurrency }, () =>
          ctx.store.applyInboundSignal({
            ...hardBounce(d),
            signal: { ...signal(d, 'hard-bounce'), id: testId('sig') },
          }),
        ),
      );
      expect(results.filter((r) => r.applied)).toHaveLength(1);
      expect(results.filter((r) => r.deliveryChanged)).toHaveLength(1);
      expect(await ctx.store.listInboundSignals(d.id)).toHaveLength(1);
    });

    it('race: concurrent soft bounces of one address each count once, and one of them suppresses', async () => {
      const n = ctx.concurrency;
      const { deliveries } = await sentDelivery(Array.from({ length: n }, (_, i) => `r${i}@example.com`));
      const results = await Promise.all(
        deliveries.map((d) =>
          ctx.store.applyInboundSignal({
            signal: { ...signal(d, 'soft-bounce'), address: 'same@example.com' },
            softBounce: {
              suppressAt: n,
              suppression: { ...suppression(d, 'hard-bounce'), address: 'same@example.com' },
            },
            now: testTime(1000),
          }),
        ),
      );
      expect(results.map((r) => r.softBounces).sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual(
        Array.from({ length: n }, (_, i) => i + 1),
      );
      expect(results.filter((r) => r.suppressed)).toHaveLength(1);
    });
  });
}
