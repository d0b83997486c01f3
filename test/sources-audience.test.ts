import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailroom, type ExistingAction, type Mailroom, type Store } from '@mailroom/core';
import { seedProfiles } from '@mailroom/core/testing';
import { type MemoryTransport, memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';

/** A loopback host serving one CSV with byte ranges (S3-like), enough for these tests. */
async function csvHost(text: string): Promise<{ url: string; allow: string; close: () => Promise<void> }> {
  const body = Buffer.from(text);
  const server: Server = createServer((req, res) => {
    const match = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (!match) {
      res.writeHead(200, { 'content-length': body.length }).end(body);
      return;
    }
    const first = Number(match[1]);
    const last = Math.min(Number(match[2]), body.length - 1);
    res.writeHead(206, {
      etag: '"members-v1"',
      'content-range': `bytes ${first}-${last}/${body.length}`,
      'content-length': last - first + 1,
    });
    res.end(body.subarray(first, last + 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/incoming.csv`,
    allow: `127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const INCOMING_CSV = [
  'Email,Name,tier,color',
  'ann@example.test,Ann Incoming,platinum,red',
  'dan@example.test,Dan Incoming,silver,',
  'eve@example.test,Eve Incoming,bronze,blue',
].join('\n');

describe.each(storeCases())('audience group sources on $name', ({ make }) => {
  let mailroom: Mailroom;
  let store: Store;
  let transport: MemoryTransport;
  let secret: string;
  let projectId: string;
  let host: Awaited<ReturnType<typeof csvHost>>;

  beforeEach(async () => {
    host = await csvHost(INCOMING_CSV);
    store = await make();
    transport = memoryTransport();
    mailroom = createMailroom({ store, transport, fetch: { allowHosts: [host.allow] } });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: 'news@acme.test' });
    const group = await mailroom.admin.createAudienceGroup(projectId, { ref: 'vip' });
    const seed = { onExistingProfile: 'override', onExistingTrait: 'override', groupId: group.id } as const;
    await seedProfiles(
      store,
      projectId,
      [
        { address: 'ann@example.test', name: 'Ann Stored', traits: { tier: 'gold', city: 'Oslo' } },
        { address: 'bob@example.test', name: 'Bob Stored', traits: { tier: 'gold' } },
        { address: 'cat@example.test', name: 'Cat Stored' },
        { address: 'dan@example.test', traits: { city: 'Rome' } },
      ],
      seed,
      new Date(),
    );
    // Eve has a profile but is not in the group.
    await seedProfiles(
      store,
      projectId,
      [{ address: 'eve@example.test', name: 'Eve Stored', traits: { tier: 'gold' } }],
      { ...seed, groupId: null },
      new Date(),
    );
    await mailroom.admin.setSubscription(projectId, 'bob@example.test', 'unsubscribed');
    await mailroom.admin.suppress(projectId, 'cat@example.test', 'manual');
  });

  afterEach(async () => {
    await mailroom.close();
    await host.close();
  });

  const audience = (options: Record<string, unknown> = {}) => ({
    config: {
      ref: 'vip',
      actionOnExistingTrait: 'preserve',
      actionOnExistingProfile: 'preserve',
      includeUnsubscribed: false,
      ...options,
    },
  });
  const base = {
    subject: 'For {{ profile.firstName }}',
    sender: 'news@acme.test',
    message:
      '<p>{{ profile.name }}: {{ profile.tier | default: "none" }} in {{ profile.city | default: "?" }}</p>',
  };

  it('leaves out unsubscribed members unless includeUnsubscribed, and suppressed ones always', async () => {
    const { ref } = await mailroom.broadcast(secret, { ...base, sources: [audience()] });
    await mailroom.worker.drain();
    expect(transport.outbox.map((m) => m.to.address).sort()).toEqual([
      'ann@example.test',
      'dan@example.test',
    ]);
    expect(transport.messagesTo('ann@example.test')[0]?.html).toContain('Ann Stored: gold in Oslo');
    expect(transport.messagesTo('dan@example.test')[0]?.subject).toBe('For dan');
    // Left out means no delivery at all, not a skipped one.
    expect((await mailroom.listDeliveries(secret, ref)).map((d) => d.address).sort()).toEqual([
      'ann@example.test',
      'dan@example.test',
    ]);

    transport.outbox.length = 0;
    await mailroom.broadcast(secret, { ...base, sources: [audience({ includeUnsubscribed: true })] });
    await mailroom.worker.drain();
    expect(transport.outbox.map((m) => m.to.address).sort()).toEqual([
      'ann@example.test',
      'bob@example.test',
      'dan@example.test',
    ]);
  });

  it('matches suppressions on any ASCII case of the local part: single sends, CSV sources and audience members', async () => {
    await mailroom.admin.suppress(projectId, 'suppA@example.test', 'manual');
    // A single send to two case variants: both suppressed, neither sent.
    const single = await mailroom.send(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: 'Hello',
      recipients: ['SUPPA@example.test', 'suppa@example.test', 'ok@example.test'],
    });
    await mailroom.worker.drain();
    expect(transport.outbox.map((m) => m.to.address)).toEqual(['ok@example.test']);
    const statuses = (await mailroom.listDeliveries(secret, single.ref)).map((d) => [d.address, d.status]);
    expect(statuses.sort()).toEqual([
      ['SUPPA@example.test', 'suppressed'],
      ['ok@example.test', 'sent'],
      ['suppa@example.test', 'suppressed'],
    ]);
    // An audience member and a CSV row under other cases: left out, or suppressed at send.
    const group = await mailroom.admin.createAudienceGroup(projectId, { ref: 'cases' });
    const seed = { onExistingProfile: 'override', onExistingTrait: 'override', groupId: group.id } as const;
    await seedProfiles(
      store,
      projectId,
      [{ address: 'SuppA@example.test' }, { address: 'fine@example.test' }],
      seed,
      new Date(),
    );
    // The CSV source's row `ann@example.test`, under a suppression written `ANN@`.
    await mailroom.admin.suppress(projectId, 'ANN@example.test', 'complaint');
    transport.outbox.length = 0;
    const audienceRef = await mailroom.broadcast(secret, {
      ...base,
      sources: [{ config: { ref: 'cases' } }],
    });
    const csvRef = await mailroom.broadcast(secret, {
      ...base,
      sources: [{ type: 'CSV', config: { label: 'cases', url: host.url } }],
    });
    await mailroom.worker.drain();
    expect(transport.outbox.map((m) => m.to.address).sort()).toEqual([
      'dan@example.test',
      'eve@example.test',
      'fine@example.test',
    ]);
    expect((await mailroom.listDeliveries(secret, audienceRef.ref)).map((d) => d.address)).toEqual([
      'fine@example.test',
    ]);
    const csvDeliveries = await mailroom.listDeliveries(secret, csvRef.ref);
    expect(csvDeliveries.find((d) => d.address === 'ann@example.test')?.status).toBe('suppressed');
    // Lifted by any case.
    expect(await mailroom.admin.unsuppress(projectId, 'SUPPA@EXAMPLE.TEST')).toBe(true);
  });

  it('expands a group of more than one page in one drain', async () => {
    const group = await mailroom.admin.createAudienceGroup(projectId, { ref: 'big' });
    const rows = Array.from({ length: 1_234 }, (_, i) => ({
      address: `m${String(i).padStart(5, '0')}@example.test`,
    }));
    await seedProfiles(
      store,
      projectId,
      rows,
      { onExistingProfile: 'preserve', onExistingTrait: 'preserve', groupId: group.id },
      new Date(),
    );
    const { ref } = await mailroom.broadcast(secret, { ...base, sources: [{ config: { ref: 'big' } }] });
    await mailroom.worker.drain();
    const view = await mailroom.getMailing(secret, ref);
    expect(view).toMatchObject({ status: 'completed', counts: { sent: 1_234 } });
    expect(new Set(transport.outbox.map((m) => m.to.address)).size).toBe(1_234);
  });

  const matrix: Array<[ExistingAction, ExistingAction]> = [
    ['preserve', 'preserve'],
    ['preserve', 'override'],
    ['override', 'preserve'],
    ['override', 'override'],
  ];
  for (const order of ['CSV first', 'audience first'] as const) {
    it.each(matrix)(
      `actionOnExistingProfile=%s, actionOnExistingTrait=%s decide a member's profile against a CSV row (${order})`,
      async (onProfile, onTrait) => {
        const csv = { type: 'CSV', config: { label: 'spring', url: host.url } };
        const aud = audience({ actionOnExistingProfile: onProfile, actionOnExistingTrait: onTrait });
        // The two sources run in a known order: the second comes in a later batch, after the first ran.
        const [first, second] = order === 'CSV first' ? [csv, aud] : [aud, csv];
        const { ref } = await mailroom.broadcast(secret, { ...base, sources: [first] });
        await mailroom.worker.drain();
        await mailroom.broadcast(secret, { broadcastRef: ref, sources: [second] });
        await mailroom.worker.drain();

        const ann = await store.getProfile(projectId, 'ann@example.test');
        expect(ann?.name).toBe(onProfile === 'override' ? 'Ann Incoming' : 'Ann Stored');
        // Traits only one side has are combined either way; a shared key follows actionOnExistingTrait.
        expect(ann?.traits).toEqual({
          tier: onTrait === 'override' ? 'platinum' : 'gold',
          city: 'Oslo',
          color: 'red',
        });
        expect(ann?.labels).toEqual(['spring']);
        // A member with no stored name takes the incoming one whatever the option.
        const dan = await store.getProfile(projectId, 'dan@example.test');
        expect(dan?.name).toBe('Dan Incoming');
        expect(dan?.traits).toEqual({ city: 'Rome', tier: 'silver' });
        // Eve is not in the group: the CSV's own rule (preserve) applies to her.
        const eve = await store.getProfile(projectId, 'eve@example.test');
        expect(eve).toMatchObject({ name: 'Eve Stored', traits: { tier: 'gold', color: 'blue' } });
        // One message per address; it renders with the data of the part that reached the address first.
        expect(transport.messagesTo('ann@example.test')).toHaveLength(1);
        expect(transport.messagesTo('ann@example.test')[0]?.html).toContain(
          order === 'CSV first' ? 'Ann Incoming: platinum in ?' : 'Ann Stored: gold in Oslo',
        );
        expect(transport.outbox).toHaveLength(3);
      },
    );
  }

  it('lets an inline recipient of the same request win its delivery and its name (inline rule)', async () => {
    const { ref } = await mailroom.broadcast(secret, {
      ...base,
      recipients: [{ address: 'ann@example.test', name: 'Ann Inline', variables: { x: 1 } }],
      sources: [audience()],
    });
    await mailroom.worker.drain();
    expect(transport.messagesTo('ann@example.test')).toHaveLength(1);
    expect(transport.messagesTo('ann@example.test')[0]?.html).toContain('Ann Inline: none in ?');
    const ann = await store.getProfile(projectId, 'ann@example.test');
    expect(ann).toMatchObject({ name: 'Ann Inline', traits: { tier: 'gold', city: 'Oslo' } });
    expect((await mailroom.getMailing(secret, ref)).counts.sent).toBe(2);
  });

  it('takes audience sources in a later batch, without a second message to an address already sent', async () => {
    const { ref } = await mailroom.broadcast(secret, {
      ...base,
      recipients: [{ address: 'dan@example.test', name: 'Dan Early' }],
    });
    await mailroom.worker.drain();
    const later = await mailroom.broadcast(secret, { broadcastRef: ref, sources: [audience()] });
    expect(later.batch.seq).toBe(2);
    await mailroom.worker.drain();
    expect(transport.outbox.map((m) => m.to.address).sort()).toEqual([
      'ann@example.test',
      'dan@example.test',
    ]);
    expect((await mailroom.getMailing(secret, ref)).status).toBe('completed');
  });
});
