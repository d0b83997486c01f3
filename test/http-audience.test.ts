import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callApi, listenMailroom } from './support/http-harness.js';
import { type RangeHost, rangeHost } from './support/range-host.js';

type Json = Record<string, unknown>;

const CSV = Buffer.from(
  'email,name,city\nann@example.test,Ann,Oslo\nnot-an-address,Bad,Rome\nbob@Example.TEST,Bob,Lima\n',
);

/**
 * The audience (`/audience/...`), broadcast and message status (`/broadcasts`, `/messages/:ref`) over both
 * binders on 127.0.0.1, with a CSV import from a loopback file host that serves byte ranges.
 */
// Each binder on another store: Express on memory, Fastify on SQLite (the kit runs every store's erasure).
describe.each([
  ['express', 'memory'],
  ['fastify', 'sqlite'],
] as const)('audience and status over HTTP (%s, %s store)', (binder, storeKind) => {
  let mailroom: Mailroom;
  let host: RangeHost;
  let close: () => Promise<void>;
  let base: string;
  let secret: string;
  let otherSecret: string;

  beforeEach(async () => {
    host = await rangeHost(CSV);
    mailroom = createMailroom({
      store:
        storeKind === 'memory'
          ? memoryStore()
          : sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-audience-')), 'mailroom.db') }),
      transport: memoryTransport(),
      fetch: { allowHosts: [host.allow] },
    });
    for (const name of ['Acme', 'Other']) {
      const created = await mailroom.admin.createProject({ name });
      await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
      if (name === 'Acme') secret = created.secret;
      else otherSecret = created.secret;
    }
    ({ url: base, close } = await listenMailroom(binder, mailroom));
  });

  afterEach(async () => {
    await close();
    await mailroom.close();
    await host.close();
  });

  async function call(method: string, path: string, body?: unknown, auth: string | null = secret) {
    const answer = await callApi<Json>(base, method, path, body, auth);
    return { ...answer, data: (answer.json.data ?? {}) as Json };
  }

  async function send(recipients: unknown[], extra: Json = {}): Promise<string> {
    const res = await call('POST', '/send/mail', {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: '<p>Hi {{ name }}</p>',
      recipients,
      ...extra,
    });
    expect(res.status).toBe(200);
    return res.data.ref as string;
  }

  it('creates, lists, pages and deletes groups; refuses unknown fields, a ref in use and no key', async () => {
    expect((await call('GET', '/audience/groups', undefined, null)).status).toBe(401);
    const created = await call('POST', '/audience/groups', { ref: 'vip', name: 'VIP' });
    expect(created.status).toBe(200);
    expect(created.data.group).toMatchObject({ ref: 'vip', name: 'VIP', members: 0 });
    const again = await call('POST', '/audience/groups', { ref: 'vip' });
    expect(again.status).toBe(409);
    const unknown = await call('POST', '/audience/groups', { ref: 'x', colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.json.message).toContain('colour');
    expect(unknown.json.issues).toEqual([expect.objectContaining({ path: ['colour'] })]);
    expect((await call('POST', '/audience/groups', { ref: 'bad ref' })).status).toBe(400);

    await send(
      ['c@example.test', 'a@example.test', 'b@example.test'].map((address) => ({ address })),
      { options: { acquiringAudience: 'vip' } },
    );
    const groups = await call('GET', '/audience/groups');
    expect(groups.data.groups).toEqual([expect.objectContaining({ ref: 'vip', members: 3 })]);
    expect((await call('GET', '/audience/groups', undefined, otherSecret)).data.groups).toEqual([]);

    const first = await call('GET', '/audience/groups/vip/members?limit=2');
    expect((first.data.profiles as Json[]).map((p) => p.address)).toEqual([
      'a@example.test',
      'b@example.test',
    ]);
    const cursor = encodeURIComponent(first.data.nextCursor as string);
    const second = await call('GET', `/audience/groups/vip/members?limit=2&cursor=${cursor}`);
    expect((second.data.profiles as Json[]).map((p) => p.address)).toEqual(['c@example.test']);
    expect(second.data.nextCursor).toBeNull();
    expect((await call('GET', '/audience/groups/vip/members?limit=0')).status).toBe(400);
    expect((await call('GET', '/audience/groups/nope/members')).status).toBe(404);

    expect((await call('DELETE', '/audience/groups/vip', undefined, otherSecret)).status).toBe(404);
    expect((await call('DELETE', '/audience/groups/vip')).status).toBe(200);
    expect((await call('DELETE', '/audience/groups/vip')).status).toBe(404);
    expect((await call('GET', '/audience/groups')).data.groups).toEqual([]);
    // The profiles stay.
    expect((await call('GET', '/audience/profiles/a%40example.test')).status).toBe(200);
  });

  it('lists profiles by prefix and label, gets one, and updates traits, labels and name', async () => {
    await send([{ address: 'ann@example.test', name: 'Ann' }, { address: 'bob@example.test' }]);
    await mailroom.admin.suppress(
      (await mailroom.authenticate(secret)).project.id,
      'bob@example.test',
      'manual',
    );
    const all = await call('GET', '/audience/profiles');
    expect((all.data.profiles as Json[]).map((p) => p.address)).toEqual([
      'ann@example.test',
      'bob@example.test',
    ]);
    const byPrefix = await call('GET', '/audience/profiles?q=bob');
    expect((byPrefix.data.profiles as Json[]).map((p) => p.address)).toEqual(['bob@example.test']);

    const patched = await call('PATCH', '/audience/profiles/ann%40example.test', {
      traits: { plan: 'pro', city: 'Oslo' },
      labels: ['beta', 'beta', 'early'],
      name: 'Ann A.',
    });
    expect(patched.status).toBe(200);
    expect(patched.data.profile).toMatchObject({
      address: 'ann@example.test',
      name: 'Ann A.',
      traits: { plan: 'pro', city: 'Oslo' },
      labels: ['beta', 'early'],
    });
    // A trait set to null is removed; the others stay.
    const merged = await call('PATCH', '/audience/profiles/ann%40example.test', { traits: { city: null } });
    expect((merged.data.profile as Json).traits).toEqual({ plan: 'pro' });
    const byLabel = await call('GET', '/audience/profiles?label=beta');
    expect((byLabel.data.profiles as Json[]).map((p) => p.address)).toEqual(['ann@example.test']);

    const bob = await call('GET', '/audience/profiles/bob%40example.test');
    expect((bob.data.profile as Json).suppression).toMatchObject({ reason: 'manual' });
    expect((await call('GET', '/audience/profiles/bob%40example.test', undefined, otherSecret)).status).toBe(
      404,
    );
    expect((await call('GET', '/audience/profiles/nobody%40example.test')).status).toBe(404);
  });

  it('refuses bad profile updates with the field named and nothing written', async () => {
    await send([
      { address: 'ann@example.test', name: 'Ann' },
      { address: 'bob@example.test', name: 'Bob' },
    ]);
    const before = (await call('GET', '/audience/profiles')).data.profiles;

    const taken = await call('PATCH', '/audience/profiles/ann%40example.test', {
      address: 'bob@example.test',
      traits: { plan: 'pro' },
    });
    expect(taken.status).toBe(409);
    expect(taken.json.code).toBe('CONFLICT');
    expect(taken.json.issues).toEqual([expect.objectContaining({ path: ['address'] })]);

    const unknown = await call('PATCH', '/audience/profiles/ann%40example.test', {
      traits: {},
      colour: 'red',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.message).toContain('colour');
    const badAddress = await call('PATCH', '/audience/profiles/ann%40example.test', { address: 'nope' });
    expect(badAddress.status).toBe(400);
    expect(badAddress.json.issues).toEqual([expect.objectContaining({ path: ['address'] })]);
    const badTraits = await call('PATCH', '/audience/profiles/ann%40example.test', { traits: ['x'] });
    expect(badTraits.status).toBe(400);
    expect(badTraits.json.issues).toEqual([expect.objectContaining({ path: ['traits'] })]);
    expect((await call('GET', '/audience/profiles')).data.profiles).toEqual(before);

    // A move to a free address carries the profile.
    const moved = await call('PATCH', '/audience/profiles/ann%40example.test', {
      address: 'Ann@Example.TEST',
    });
    expect(moved.status).toBe(200);
    expect((moved.data.profile as Json).address).toBe('Ann@example.test');
    expect((await call('GET', '/audience/profiles/ann%40example.test')).status).toBe(404);
  });

  it('erases an address: it no longer appears in any read, and the counts stay', async () => {
    const who = 'erin@example.test';
    await call('POST', '/audience/groups', { ref: 'vip' });
    const ref = await send([{ address: who, name: 'Erin Example' }, { address: 'kept@example.test' }], {
      options: { acquiringAudience: 'vip' },
    });
    await mailroom.worker.drain();
    const projectId = (await mailroom.authenticate(secret)).project.id;
    await mailroom.admin.suppress(projectId, who, 'complaint');
    await mailroom.admin.setSubscription(projectId, who, 'unsubscribed');
    const messageId = ((await call('GET', `/messages/${ref}`)).data.message as { recipients: Json[] })
      .recipients[0]?.messageId as string;
    expect(JSON.stringify((await call('GET', '/events')).json)).toContain(who);

    expect(
      (await call('DELETE', `/audience/profiles/${encodeURIComponent(who)}`, undefined, otherSecret)).status,
    ).toBe(404);
    const erased = await call('DELETE', `/audience/profiles/${encodeURIComponent(who)}`);
    expect(erased.status).toBe(200);
    expect(erased.data.erased).toMatchObject({
      address: who,
      profiles: 1,
      memberships: 1,
      suppressions: 1,
      deliveries: 1,
    });
    expect((erased.data.erased as { events: number }).events).toBeGreaterThanOrEqual(2);

    expect((await call('GET', `/audience/profiles/${encodeURIComponent(who)}`)).status).toBe(404);
    const reads = [
      await call('GET', '/audience/profiles'),
      await call('GET', '/audience/profiles?q=erin'),
      await call('GET', '/audience/groups/vip/members'),
      await call('GET', `/messages/${ref}`),
      await call('GET', `/messages/${encodeURIComponent(messageId)}`),
      await call('GET', '/events'),
      await call('GET', `/events?address=${encodeURIComponent(who)}`),
    ];
    for (const read of reads) {
      expect(JSON.stringify(read.json)).not.toContain('erin');
      expect(JSON.stringify(read.json)).not.toContain('Erin');
    }
    const message = reads[3]?.data.message as { counts: Json; recipients: Json[] };
    expect(message.counts.sent).toBe(2);
    expect(message.recipients.map((r) => r.address).sort()).toEqual([
      expect.stringMatching(/^dlv_.*@erased\.invalid$/),
      'kept@example.test',
    ]);
    expect(JSON.stringify(await mailroom.store.findSuppressed(projectId, [who]))).toBe('[]');
    // Nothing left to erase.
    expect((await call('DELETE', `/audience/profiles/${encodeURIComponent(who)}`)).status).toBe(404);
  });

  it('imports a CSV from a loopback host into a group, with progress; no mail is sent', async () => {
    await call('POST', '/audience/groups', { ref: 'vip' });
    const started = await call('POST', '/audience/imports', { url: host.url, group: 'vip', label: 'spring' });
    expect(started.status).toBe(200);
    const id = (started.data.import as Json).id as string;
    expect(started.data.import).toMatchObject({
      id: expect.stringMatching(/^imp_/),
      group: 'vip',
      status: 'pending',
    });
    expect(JSON.stringify(started.json)).not.toContain('X-Amz-Signature');
    await mailroom.worker.drain();
    const done = await call('GET', `/audience/imports/${id}`);
    expect(done.data.import).toMatchObject({
      id,
      group: 'vip',
      label: 'spring',
      status: 'done',
      rowsDone: 3,
      rowsFailed: 1,
      rowErrors: [expect.objectContaining({ line: 3 })],
    });
    // Byte ranges, asked If-Range on the version probed.
    expect(host.log.every((r) => r.status === 206 && r.range?.startsWith('bytes='))).toBe(true);
    const members = await call('GET', '/audience/groups/vip/members');
    expect(members.data.profiles).toEqual([
      expect.objectContaining({
        address: 'ann@example.test',
        name: 'Ann',
        traits: { city: 'Oslo' },
        labels: ['spring'],
      }),
      expect.objectContaining({ address: 'bob@example.test', name: 'Bob', traits: { city: 'Lima' } }),
    ]);
    expect((await call('GET', '/broadcasts')).data.broadcasts).toEqual([]);
    expect((mailroom.transport as ReturnType<typeof memoryTransport>).outbox).toEqual([]);
    expect((await call('GET', `/audience/imports/${id}`, undefined, otherSecret)).status).toBe(404);
    expect((await call('GET', '/audience/imports/imp_nope')).status).toBe(404);
  });

  it('caps traits per profile and columns per CSV import, naming the cap; nothing stored past it', async () => {
    await call('POST', '/audience/groups', { ref: 'wide' });
    // 100,000 columns: the import fails on its header, no profile is made.
    const headings = ['email', ...Array.from({ length: 99_999 }, (_, i) => `t${i}`)];
    const cells = ['wide@example.test', ...Array.from({ length: 99_999 }, () => 'x')];
    host.replace(Buffer.from(`${headings.join(',')}\n${cells.join(',')}\n`));
    const wide = await call('POST', '/audience/imports', { url: host.url, group: 'wide' });
    expect(wide.status).toBe(200);
    await mailroom.worker.drain();
    const failed = await call('GET', `/audience/imports/${(wide.data.import as Json).id as string}`);
    expect(failed.data.import).toMatchObject({ status: 'failed' });
    expect(JSON.stringify(failed.data.import)).toMatch(/100,000 columns.*csvColumns cap/);
    expect((await call('GET', '/audience/profiles/wide%40example.test')).status).toBe(404);
    // At the cap (1,000 columns) a row is read; a row whose traits pass 64 KiB is a row error.
    const atCap = ['email', ...Array.from({ length: 999 }, (_, i) => `t${i}`)];
    const big = 'y'.repeat(100);
    host.replace(
      Buffer.from(
        `${atCap.join(',')}\nok@example.test,${Array(999).fill('x').join(',')}\nbig@example.test,${Array(999).fill(big).join(',')}\n`,
      ),
    );
    const capped = await call('POST', '/audience/imports', { url: host.url, group: 'wide' });
    await mailroom.worker.drain();
    const done = await call('GET', `/audience/imports/${(capped.data.import as Json).id as string}`);
    expect(done.data.import).toMatchObject({ status: 'done', rowsDone: 2, rowsFailed: 1 });
    expect(JSON.stringify(done.data.import)).toMatch(/profileTraitBytes cap/);
    const ok = await call('GET', '/audience/profiles/ok%40example.test');
    expect(Object.keys((ok.data.profile as Json).traits as Json)).toHaveLength(999);
    // PATCH: the merged traits are capped like variables, the cap named on the field.
    const more = Object.fromEntries(Array.from({ length: 2 }, (_, i) => [`more${i}`, 1]));
    const over = await call('PATCH', '/audience/profiles/ok%40example.test', { traits: more });
    expect(over.status).toBe(400);
    expect(over.json.issues).toEqual([expect.objectContaining({ path: ['traits'] })]);
    expect(over.json.message).toMatch(/1000 keys.*profileTraits cap/);
    const one = await call('PATCH', '/audience/profiles/ok%40example.test', { traits: { more0: 1 } });
    expect(one.status).toBe(200);
    const huge = await call('PATCH', '/audience/profiles/ok%40example.test', {
      traits: { t0: 'z'.repeat(70_000) },
    });
    expect(huge.status).toBe(400);
    expect(huge.json.message).toMatch(/profileTraitBytes cap/);
  });

  it('keeps the traits cap across imports: two imports each under it never grow a profile past it', async () => {
    await call('POST', '/audience/groups', { ref: 'wide' });
    // Two imports of 600 columns each, other headings: 1,200 traits together, 1,000 kept.
    for (const prefix of ['a', 'b']) {
      const headings = ['email', ...Array.from({ length: 600 }, (_, i) => `${prefix}${i}`)];
      host.replace(
        Buffer.from(`${headings.join(',')}
wide@example.test,${Array(600).fill('x').join(',')}
`),
      );
      const started = await call('POST', '/audience/imports', { url: host.url, group: 'wide' });
      await mailroom.worker.drain();
      const done = await call('GET', `/audience/imports/${(started.data.import as Json).id as string}`);
      expect(done.data.import).toMatchObject({ status: 'done', rowsDone: 1, rowsFailed: 0 });
    }
    const profile = await call('GET', '/audience/profiles/wide%40example.test');
    const traits = (profile.data.profile as Json).traits as Json;
    expect(Object.keys(traits)).toHaveLength(1_000);
    // The first import's traits are all kept; of the second's, those that fit, in column order.
    expect(traits.a599).toBe('x');
    expect(traits.b399).toBe('x');
    expect(traits.b400).toBeUndefined();
  });

  it('refuses bad imports: unknown fields, an unknown group, a host without byte ranges', async () => {
    await call('POST', '/audience/groups', { ref: 'vip' });
    const unknown = await call('POST', '/audience/imports', { url: host.url, group: 'vip', when: 'now' });
    expect(unknown.status).toBe(400);
    expect(unknown.json.message).toContain('when');
    const noGroup = await call('POST', '/audience/imports', { url: host.url, group: 'nope' });
    expect(noGroup.status).toBe(422);
    expect(noGroup.json.issues).toEqual([expect.objectContaining({ path: ['group'] })]);
    expect((await call('POST', '/audience/imports', { url: 'ftp://x', group: 'vip' })).status).toBe(400);
    const whole = await rangeHost(CSV, { ranges: false });
    try {
      const refused = await call('POST', '/audience/imports', { url: whole.url, group: 'vip' });
      // Not on the allow-list: refused by the guard before any byte is read; on it: no byte ranges.
      expect([403, 422]).toContain(refused.status);
    } finally {
      await whole.close();
    }
    expect((await call('GET', '/audience/profiles')).data.profiles).toEqual([]);
  });

  it('lists broadcasts with counts in pages and shows one; messages by ref and by Message-ID', async () => {
    const refs: string[] = [];
    for (const n of [1, 2, 3]) {
      const res = await call('POST', '/send/mail/broadcast', {
        subject: `B${n}`,
        sender: 'news@acme.test',
        message: '<p>Hi</p>',
        recipients: [{ address: `r${n}@example.test` }, { address: `s${n}@example.test` }],
      });
      expect(res.status).toBe(200);
      refs.push(res.data.broadcastRef as string);
    }
    const ref = await send([{ address: 'one@example.test' }, { address: 'two@example.test' }]);
    await mailroom.worker.drain();

    const first = await call('GET', '/broadcasts?limit=2');
    const listed = first.data.broadcasts as Json[];
    expect(listed.map((b) => b.ref)).toEqual([refs[2], refs[1]]);
    expect(listed[0]?.counts).toMatchObject({ sent: 2, queued: 0 });
    const next = await call('GET', `/broadcasts?limit=2&cursor=${first.data.nextCursor as string}`);
    expect((next.data.broadcasts as Json[]).map((b) => b.ref)).toEqual([refs[0]]);
    expect(next.data.nextCursor).toBeNull();
    expect((await call('GET', '/broadcasts', undefined, otherSecret)).data.broadcasts).toEqual([]);

    const one = await call('GET', `/broadcasts/${refs[0]}`);
    expect(one.data.broadcast).toMatchObject({
      ref: refs[0],
      status: 'completed',
      counts: { sent: 2 },
      sources: [],
    });
    expect((await call('GET', `/broadcasts/${ref}`)).status).toBe(404);
    expect((await call('GET', `/broadcasts/${refs[0]}`, undefined, otherSecret)).status).toBe(404);

    const message = await call('GET', `/messages/${ref}`);
    expect(message.status).toBe(200);
    const view = message.data.message as { status: string; recipients: Json[]; more: boolean };
    expect(view).toMatchObject({ ref, kind: 'message', status: 'completed', more: false });
    expect(view.recipients.map((r) => [r.address, r.status, r.attempts])).toEqual([
      ['one@example.test', 'sent', 1],
      ['two@example.test', 'sent', 1],
    ]);
    const timeline = view.recipients[0]?.timeline as Json[];
    expect(timeline.map((e) => e.type)).toEqual(['email.sent']);
    expect(timeline[0]?.details).toHaveProperty('response');

    const messageId = view.recipients[1]?.messageId as string;
    expect(messageId).toMatch(/^<dlv_.+@acme\.test>$/);
    const byId = await call('GET', `/messages/${encodeURIComponent(messageId)}`);
    expect((byId.data.message as { recipients: Json[] }).recipients.map((r) => r.address)).toEqual([
      'two@example.test',
    ]);
    const bare = encodeURIComponent(messageId.slice(1, -1));
    expect((await call('GET', `/messages/${bare}`)).status).toBe(200);
    // A broadcast's recipient by Message-ID, but not a broadcast by ref.
    const broadcastMessageId = (await mailroom.listDeliveries(secret, refs[0] as string))[0]
      ?.messageId as string;
    expect((await call('GET', `/messages/${encodeURIComponent(broadcastMessageId)}`)).status).toBe(200);
    expect((await call('GET', `/messages/${refs[0]}`)).status).toBe(404);
    expect(
      (await call('GET', `/messages/${encodeURIComponent(messageId)}`, undefined, otherSecret)).status,
    ).toBe(404);
    expect((await call('GET', `/messages/${encodeURIComponent('<dlv_nope@acme.test>')}`)).status).toBe(404);
    expect((await call('GET', `/messages/${ref}`, undefined, null)).status).toBe(401);
  });
});
