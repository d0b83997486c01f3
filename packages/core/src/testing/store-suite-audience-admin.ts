/** Store conformance: the AudienceAdminStore role (listing and editing profiles, groups, erasure). */
import { describe, expect, it } from 'vitest';
import { ERASED_ADDRESS, erasedDeliveryAddress, isAudienceImport } from '../store/audience-admin-store.js';
import type { DeliveryRecord } from '../store/records.js';
import { makeGroup, makeSourceJob, makeSuppression, testId, testTime } from './store-fixtures.js';
import { makeEndpoint, makeEvent, makeWebhookMessage } from './store-suite-events.js';
import {
  expectStoreError,
  PRESERVE,
  type StoreSuiteContext,
  seedMailing,
  seedProfiles,
  seedProject,
} from './store-suite-helpers.js';

/** Registers the tests of profile listing and editing, group removal and erasure. */
export function describeAudienceAdmin(ctx: StoreSuiteContext): void {
  describe('profiles, listed and edited', () => {
    it('listProfiles: by address in byte order, after a cursor, by prefix and by label, in the project only', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      await seedProfiles(ctx.store, project.id, [
        { address: 'bob@x.test', labels: ['csv'] },
        { address: 'Zed@x.test' },
        { address: 'ann@x.test', labels: ['vip', 'csv'] },
        { address: 'anna@y.test' },
        { address: 'ann@x.tesu', labels: ['vip'] },
      ]);
      await seedProfiles(ctx.store, other.id, [{ address: 'ann@x.test', labels: ['vip'] }]);
      const list = async (filter: object, after: string | null = null, limit = 10) =>
        (await ctx.store.listProfiles(project.id, filter, { after, limit })).map((p) => p.address);
      expect(await list({})).toEqual(['Zed@x.test', 'ann@x.test', 'ann@x.tesu', 'anna@y.test', 'bob@x.test']);
      expect(await list({}, 'ann@x.tesu', 2)).toEqual(['anna@y.test', 'bob@x.test']);
      expect(await list({ prefix: 'ann' })).toEqual(['ann@x.test', 'ann@x.tesu', 'anna@y.test']);
      expect(await list({ prefix: 'ann@' }, 'ann@x.test')).toEqual(['ann@x.tesu']);
      expect(await list({ prefix: 'ann@' }, 'a')).toEqual(['ann@x.test', 'ann@x.tesu']);
      expect(await list({ label: 'vip' })).toEqual(['ann@x.test', 'ann@x.tesu']);
      expect(await list({ label: 'vip' }, null, 1)).toEqual(['ann@x.test']);
      expect(await list({ label: 'csv', prefix: 'b' })).toEqual(['bob@x.test']);
      expect(await list({ label: 'none' })).toEqual([]);
      const [first] = await ctx.store.listProfiles(project.id, { prefix: 'bob' }, { limit: 1 });
      expect(first).toEqual(await ctx.store.getProfile(project.id, 'bob@x.test'));
    });

    it('updateProfile replaces the given fields and moves memberships with a new address', async () => {
      const { project } = await seedProject(ctx.store);
      const group = makeGroup(project.id, 'vip');
      await ctx.store.createGroup(group);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'old@x.test', name: 'Old', traits: { a: 1 }, labels: ['l1'] }],
        { ...PRESERVE, groupId: group.id },
        testTime(),
      );
      const now = testTime(5000);
      const updated = await ctx.store.updateProfile(
        project.id,
        'old@x.test',
        { address: 'new@x.test', traits: { b: 2 }, labels: [], status: 'unsubscribed' },
        now,
      );
      const expected = {
        projectId: project.id,
        address: 'new@x.test',
        name: 'Old',
        traits: { b: 2 },
        labels: [],
        status: 'unsubscribed',
        createdAt: testTime(),
        updatedAt: now,
      };
      expect(updated).toEqual(expected);
      expect(await ctx.store.getProfile(project.id, 'new@x.test')).toEqual(expected);
      expect(await ctx.store.getProfile(project.id, 'old@x.test')).toBeUndefined();
      const members = await ctx.store.listGroupMembers(project.id, group.id, { limit: 10 });
      expect(members.map((m) => m.address)).toEqual(['new@x.test']);
      expect(await ctx.store.updateProfile(project.id, 'old@x.test', { name: 'x' }, now)).toBeUndefined();
      const renamed = await ctx.store.updateProfile(project.id, 'new@x.test', { name: null }, testTime(6000));
      expect(renamed?.name).toBeNull();
    });

    it('updateProfile onto an existing address is CONFLICT naming it, with nothing written', async () => {
      const { project } = await seedProject(ctx.store);
      await seedProfiles(ctx.store, project.id, [
        { address: 'a@x.test', name: 'A' },
        { address: 'b@x.test', name: 'B' },
      ]);
      const before = await ctx.store.listProfiles(project.id, {}, { limit: 10 });
      await expectStoreError(
        ctx.store.updateProfile(
          project.id,
          'a@x.test',
          { address: 'b@x.test', name: 'changed' },
          testTime(9),
        ),
        'CONFLICT',
        ['profile b@x.test already exists', project.id],
      );
      expect(await ctx.store.listProfiles(project.id, {}, { limit: 10 })).toEqual(before);
    });

    it('deleteGroup removes the group and its memberships, not the profiles; scoped by project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const group = makeGroup(project.id, 'vip');
      await ctx.store.createGroup(group);
      await ctx.store.createGroup(makeGroup(other.id, 'vip'));
      await seedProfiles(ctx.store, project.id, [{ address: 'a@x.test' }], {
        ...PRESERVE,
        groupId: group.id,
      });
      expect(await ctx.store.deleteGroup(project.id, 'vip')).toBe(true);
      expect(await ctx.store.deleteGroup(project.id, 'vip')).toBe(false);
      expect(await ctx.store.getGroup(project.id, 'vip')).toBeUndefined();
      expect(await ctx.store.listGroupMembers(project.id, group.id, { limit: 10 })).toEqual([]);
      expect(await ctx.store.getProfile(project.id, 'a@x.test')).toBeDefined();
      expect(await ctx.store.getGroup(other.id, 'vip')).toBeDefined();
      // The ref is free again.
      await ctx.store.createGroup(makeGroup(project.id, 'vip'));
    });
  });

  describe('erasure', () => {
    it('eraseAddress leaves the address nowhere readable and keeps the counts', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const who = 'Erin.Gone@x.test';
      const group = makeGroup(project.id, 'vip');
      await ctx.store.createGroup(group);
      await seedProfiles(ctx.store, project.id, [{ address: who, name: 'Erin', traits: { city: 'Oslo' } }], {
        ...PRESERVE,
        groupId: group.id,
      });
      await seedProfiles(ctx.store, other.id, [{ address: who }]);
      await ctx.store.addSuppression(makeSuppression(project.id, who, { reason: 'hard-bounce' }));
      const seeded = await seedMailing(ctx.store, {
        project,
        addresses: [who, 'keep@x.test'],
        delivery: () => ({
          status: 'sent',
          sentAt: testTime(),
          variables: { first: 'Erin' },
          lastResponse: `250 ok <${who}>`,
        }),
      });
      const mine = seeded.deliveries[0] as DeliveryRecord;
      const endpoint = makeEndpoint(project.id);
      await ctx.store.addWebhookEndpoint(endpoint);
      const event = makeEvent(project.id, {
        mailingRef: seeded.mailing.ref,
        deliveryId: mine.id,
        address: who,
        data: {
          event_id: 'x',
          project_id: project.id,
          delivery: { id: mine.id, message_id: mine.messageId, address: who, attempts: 1 },
          response: `250 ok <${who}>`,
        },
      });
      const unsubscribed = makeEvent(project.id, { type: 'contact.unsubscribed', address: who });
      unsubscribed.data = { event_id: unsubscribed.id, project_id: project.id, address: who };
      const message = makeWebhookMessage(event, endpoint.id);
      await ctx.store.insertOutbox({ events: [event, unsubscribed], messages: [message] });
      await ctx.store.applyInboundSignal({
        signal: {
          id: testId('sig'),
          projectId: project.id,
          mailingId: seeded.mailing.id,
          deliveryId: mine.id,
          address: who,
          domain: 'x.test',
          kind: 'complaint',
          source: 'arf',
          reason: 'feedback',
          status: null,
          diagnostic: `complaint from ${who}`,
          reportedAddress: who,
          reportedMessageId: null,
          dedupeKey: `complaint:${mine.id}`,
          createdAt: testTime(100),
        },
        delivery: { status: 'complained', from: ['sent'], lastError: `complaint from ${who}` },
        now: testTime(100),
      });

      await ctx.store.recordTrackingHits([
        {
          id: testId('clk'),
          kind: 'click',
          projectId: project.id,
          mailingId: seeded.mailing.id,
          deliveryId: mine.id,
          linkIndex: 0,
          url: `https://shop.example.com/cart?who=${who}`,
          machine: false,
          at: testTime(150),
        },
      ]);
      const counts = await ctx.store.eraseAddress(project.id, who, testTime(200));
      expect(counts).toEqual({
        profiles: 1,
        memberships: 1,
        suppressions: 1,
        deliveries: 1,
        events: 2,
        webhookMessages: 1,
        signals: 1,
        receivedMessages: 0,
      });

      expect(await ctx.store.getProfile(project.id, who)).toBeUndefined();
      expect(await ctx.store.listProfiles(project.id, {}, { limit: 10 })).toEqual([]);
      expect(await ctx.store.listGroupMembers(project.id, group.id, { limit: 10 })).toEqual([]);
      expect(await ctx.store.findSuppressed(project.id, [who])).toEqual([]);
      expect(await ctx.store.findDelivery(seeded.mailing.id, who)).toBeUndefined();
      const erased = await ctx.store.getDelivery(mine.id);
      expect(erased).toMatchObject({
        address: erasedDeliveryAddress(mine.id),
        name: '',
        variables: {},
        traits: {},
        content: null,
        lastResponse: null,
        lastError: null,
        status: 'complained',
        messageId: mine.messageId,
      });
      expect((await ctx.store.countDeliveries(seeded.mailing.id)).complained).toBe(1);
      const kept = await ctx.store.findDelivery(seeded.mailing.id, 'keep@x.test');
      expect(kept?.lastResponse).toBe(`250 ok <${who}>`);
      const events = await ctx.store.listEvents(project.id, {}, { limit: 10 });
      expect(events).toHaveLength(2);
      expect(JSON.stringify(events)).not.toContain(who);
      expect(JSON.stringify(events)).toContain(ERASED_ADDRESS);
      expect(await ctx.store.listEvents(project.id, { address: who }, { limit: 10 })).toEqual([]);
      const messages = await ctx.store.listWebhookMessages(project.id, { limit: 10 });
      expect(messages).toHaveLength(1);
      expect(messages[0]?.payload).not.toContain(who);
      const signals = await ctx.store.listInboundSignals(mine.id);
      expect(signals).toHaveLength(1);
      expect(JSON.stringify(signals)).not.toContain(who);
      expect(signals[0]).toMatchObject({ kind: 'complaint', address: ERASED_ADDRESS, diagnostic: null });
      const tracked = await ctx.store.deliveryTracking(mine.id);
      expect(tracked.clicks.map((c) => c.url)).toEqual([
        `https://shop.example.com/cart?who=${ERASED_ADDRESS}`,
      ]);
      // Another project's profile of the same address is its own.
      expect(await ctx.store.getProfile(other.id, who)).toBeDefined();
      // Erasing again finds nothing.
      expect(await ctx.store.eraseAddress(project.id, who, testTime(300))).toEqual({
        profiles: 0,
        memberships: 0,
        suppressions: 0,
        deliveries: 0,
        events: 0,
        webhookMessages: 0,
        signals: 0,
        receivedMessages: 0,
      });
    });
  });

  describe('audience imports', () => {
    it('insertImportJob: a source job with no mailing, claimed and listed like any', async () => {
      const { project } = await seedProject(ctx.store);
      const id = testId('imp');
      const job = makeSourceJob({ id, projectId: project.id }, { id }, { id, kind: 'csv' });
      await ctx.store.insertImportJob(job);
      expect(isAudienceImport(job)).toBe(true);
      expect(await ctx.store.listSourceJobs(id)).toEqual([job]);
      await expectStoreError(ctx.store.insertImportJob(job), 'CONFLICT', []);
      const claimed = await ctx.store.claimSourceJob({ now: testTime(10), leaseMs: 1000 });
      expect(claimed).toMatchObject({ id, status: 'running', leaseToken: job.leaseToken + 1 });
    });
  });
}
