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
    fromAddress: 'ana@example.org',
    expiresAt: null,
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

  it('keeps raw bytes in pieces and returns them whole, for the message’s project only', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    // 2.5 MiB of every byte value: more than one piece on a store that splits them.
    const raw = new Uint8Array(2.5 * 1024 * 1024).map((_, i) => (i * 7 + (i >> 11)) & 0xff);
    await ctx.store.saveReceivedMessage(makeMessage(project.id, 'rte_1', 'inm_raw0000001'), undefined, raw);
    await ctx.store.saveReceivedMessage(makeMessage(project.id, 'rte_1', 'inm_raw0000002'));
    const empty = new Uint8Array(0);
    await ctx.store.saveReceivedMessage(makeMessage(project.id, 'rte_1', 'inm_raw0000003'), undefined, empty);
    const read = await ctx.store.readReceivedRaw(project.id, 'inm_raw0000001');
    expect(read?.byteLength).toBe(raw.byteLength);
    expect(Buffer.from(read as Uint8Array).equals(Buffer.from(raw))).toBe(true);
    expect(await ctx.store.readReceivedRaw(other.id, 'inm_raw0000001')).toBeUndefined();
    expect(await ctx.store.readReceivedRaw(project.id, 'inm_raw0000002')).toBeUndefined();
    expect((await ctx.store.readReceivedRaw(project.id, 'inm_raw0000003'))?.byteLength).toBe(0);
  });

  it('prunes received messages past their expiry with their raw bytes, a chunk at a time', async () => {
    const { project } = await seedProject(ctx.store);
    const at = (ms: number) => new Date(testTime().getTime() + ms);
    const ids = ['inm_exp0000001', 'inm_exp0000002', 'inm_exp0000003', 'inm_exp0000004'];
    const expiries = [at(1_000), at(2_000), at(3_000), null];
    for (const [i, id] of ids.entries()) {
      await ctx.store.saveReceivedMessage(
        { ...makeMessage(project.id, 'rte_1', id), expiresAt: expiries[i] ?? null },
        undefined,
        new Uint8Array([i]),
      );
    }
    expect(await ctx.store.pruneReceivedMessages(at(999), 10)).toBe(0);
    expect(await ctx.store.pruneReceivedMessages(at(2_000), 1)).toBe(1);
    expect(await ctx.store.pruneReceivedMessages(at(2_000), 10)).toBe(1);
    expect(await ctx.store.getReceivedMessage(project.id, ids[0] as string)).toBeUndefined();
    expect(await ctx.store.readReceivedRaw(project.id, ids[1] as string)).toBeUndefined();
    expect((await ctx.store.readReceivedRaw(project.id, ids[2] as string))?.[0]).toBe(2);
    expect(await ctx.store.pruneReceivedMessages(at(1e12), 10)).toBe(1);
    const left = await ctx.store.listReceivedMessages(project.id, { limit: 10 });
    expect(left.map((m) => m.id)).toEqual([ids[3]]);
  });

  it('keeps a project’s receiving settings, replaced whole', async () => {
    const { project } = await seedProject(ctx.store);
    expect(await ctx.store.getReceivingSettings(project.id)).toBeUndefined();
    const first = {
      projectId: project.id,
      retentionDays: 7,
      maxMessageBytes: 5_000_000,
      replyDomain: 'in.example.com',
      updatedAt: testTime(),
    };
    await ctx.store.putReceivingSettings(first);
    expect(await ctx.store.getReceivingSettings(project.id)).toEqual(first);
    const second = { ...first, retentionDays: null, maxMessageBytes: null, replyDomain: null };
    await ctx.store.putReceivingSettings(second);
    expect(await ctx.store.getReceivingSettings(project.id)).toEqual(second);
  });

  it('erasing an address deletes the project’s messages from it, with their raw bytes', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    await ctx.store.saveReceivedMessage(
      makeMessage(project.id, 'rte_1', 'inm_era0000001'),
      undefined,
      new Uint8Array([1]),
    );
    await ctx.store.saveReceivedMessage({
      ...makeMessage(project.id, 'rte_1', 'inm_era0000002'),
      fromAddress: 'bo@example.org',
    });
    await ctx.store.saveReceivedMessage(makeMessage(other.id, 'rte_2', 'inm_era0000003'));
    const counts = await ctx.store.eraseAddress(project.id, 'Ana@Example.org', testTime());
    expect(counts.receivedMessages).toBe(1);
    expect(await ctx.store.getReceivedMessage(project.id, 'inm_era0000001')).toBeUndefined();
    expect(await ctx.store.readReceivedRaw(project.id, 'inm_era0000001')).toBeUndefined();
    expect(await ctx.store.getReceivedMessage(project.id, 'inm_era0000002')).toBeDefined();
    expect(await ctx.store.getReceivedMessage(other.id, 'inm_era0000003')).toBeDefined();
  });
}
