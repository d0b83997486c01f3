/** Store conformance: the ReceivingStore role (routes unique by address across projects, messages with events). */
import { expect, it } from 'vitest';
import type { ReceivedMessageRecord, ReceivingRouteRecord } from '../store/receiving-store.js';
import { testId, testTime } from './store-fixtures.js';
import { makeEvent } from './store-suite-events.js';
import { type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

function makeRoute(projectId: string, overrides: Partial<ReceivingRouteRecord> = {}): ReceivingRouteRecord {
  return {
    id: testId('rte'),
    projectId,
    domain: 'in.example.com',
    pattern: 'support',
    destination: { kind: 'store' },
    createdAt: testTime(),
    ...overrides,
  };
}

function makeMessage(projectId: string, routeId: string, id: string): ReceivedMessageRecord {
  return {
    id,
    projectId,
    routeId,
    envelopeFrom: 'ana@example.org',
    envelopeTo: ['support@in.example.com'],
    remoteAddress: '192.0.2.7',
    message: { subject: 'Hé ç', attachments: [{ filename: 'a.pdf', size: 3 }], auth: { dmarc: 'pass' } },
    createdAt: testTime(),
  };
}

/** Registers the tests of receiving routes and received messages. */
export function describeReceiving(ctx: StoreSuiteContext): void {
  it('creates routes, unique by (domain, pattern) across projects; lists, finds and deletes them', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    const support = makeRoute(project.id);
    const reply = makeRoute(project.id, {
      pattern: 'reply+*',
      destination: { kind: 'webhook', endpointId: 'wh_1' },
    });
    const elsewhere = makeRoute(other.id, {
      domain: 'other.example.com',
      pattern: '*',
      destination: { kind: 'handler' },
    });
    await ctx.store.createReceivingRoute(support);
    await ctx.store.createReceivingRoute(reply);
    await ctx.store.createReceivingRoute(elsewhere);
    await expect(ctx.store.createReceivingRoute(makeRoute(other.id))).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect(await ctx.store.listReceivingRoutes(project.id)).toEqual([reply, support]);
    expect(await ctx.store.findReceivingRoutes('in.example.com')).toEqual([reply, support]);
    expect(await ctx.store.findReceivingRoutes('other.example.com')).toEqual([elsewhere]);
    expect(await ctx.store.deleteReceivingRoute(other.id, support.id)).toBe(false);
    expect(await ctx.store.deleteReceivingRoute(project.id, support.id)).toBe(true);
    expect(await ctx.store.deleteReceivingRoute(project.id, support.id)).toBe(false);
    expect(await ctx.store.findReceivingRoutes('in.example.com')).toEqual([reply]);
  });

  it('saves a received message with its events; gets and pages them newest first, per project', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    const ids = ['inm_0000000001', 'inm_0000000002', 'inm_0000000003'];
    const event = makeEvent(project.id, { type: 'email.received' });
    await ctx.store.saveReceivedMessage(makeMessage(project.id, 'rte_1', ids[0] as string), {
      events: [event],
      messages: [],
    });
    await ctx.store.saveReceivedMessage(makeMessage(project.id, 'rte_1', ids[1] as string));
    await ctx.store.saveReceivedMessage(makeMessage(project.id, 'rte_1', ids[2] as string));
    const first = makeMessage(project.id, 'rte_1', ids[0] as string);
    expect(await ctx.store.getReceivedMessage(project.id, first.id)).toEqual(first);
    expect(await ctx.store.getReceivedMessage(other.id, first.id)).toBeUndefined();
    const page = await ctx.store.listReceivedMessages(project.id, { limit: 2 });
    expect(page.map((m) => m.id)).toEqual([ids[2], ids[1]]);
    const next = await ctx.store.listReceivedMessages(project.id, { before: ids[1], limit: 2 });
    expect(next.map((m) => m.id)).toEqual([ids[0]]);
    expect(await ctx.store.listReceivedMessages(other.id, { limit: 10 })).toEqual([]);
    const events = await ctx.store.listEvents(project.id, {}, { limit: 10 });
    expect(events.map((e) => e.id)).toEqual([event.id]);
  });
}
