/**
 * Templates, senders and suppressions over HTTP, through the Express router (memory store) and the Fastify
 * plugin (SQLite), each on a real server on 127.0.0.1: the routes of the management API with their
 * envelope, cursor paging and errors; bad input refused with the field named and nothing written; a
 * broadcast accepted before a template update keeps rendering the version it was accepted with.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, type ManualClock, manualClock, type Store } from '@mailroom/core';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { matchRoute } from '../packages/http/src/routes/routes.js';
import { callApi, listenMailroom } from './support/http-harness.js';

const PREFIX = '/v1';
const START = new Date('2031-05-01T08:00:00.000Z');
const SENDER = 'news@acme.test';

interface Answer {
  status: number;
  headers: Headers;
  json: {
    message: string;
    statusCode: number;
    code?: string;
    issues?: Array<{ code: string; path: unknown[]; message: string }>;
    data: Record<string, unknown>;
  };
  text: string;
}

interface Binder {
  name: string;
  store: () => Store;
  start: (mailroom: Mailroom) => Promise<{ url: string; close: () => Promise<void> }>;
}

const BINDERS: Binder[] = [
  {
    name: 'express on memory',
    store: () => memoryStore(),
    start: (mailroom) => listenMailroom('express', mailroom, {}, PREFIX),
  },
  {
    name: 'fastify on sqlite',
    store: () => sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-resources-')), 'mailroom.db') }),
    start: (mailroom) => listenMailroom('fastify', mailroom, {}, PREFIX),
  },
];

const MJML = (greeting: string) =>
  `<mjml>\n<mj-body>\n<mj-section>\n<mj-column>\n<mj-text>${greeting} {{ profile.firstName }}</mj-text>\n</mj-column>\n</mj-section>\n</mj-body>\n</mjml>`;
// Line 5 has an attribute MJML does not know; line 6 a tag that does not exist.
const BROKEN_MJML =
  '<mjml>\n<mj-body>\n<mj-section>\n<mj-column>\n<mj-text foo="bar">Hi</mj-text>\n<mj-textt>x</mj-textt>\n</mj-column>\n</mj-section>\n</mj-body>\n</mjml>';

describe.each(BINDERS)('templates, senders and suppressions over HTTP: $name', (binder) => {
  let mailroom: Mailroom;
  let clock: ManualClock;
  let transport: MemoryTransport;
  let base: string;
  let close: () => Promise<void>;
  let secret: string;
  let otherSecret: string;
  let projectId: string;

  beforeEach(async () => {
    clock = manualClock(START);
    transport = memoryTransport();
    mailroom = createMailroom({ store: binder.store(), transport, clock });
    const acme = await mailroom.admin.createProject({ name: 'Acme' });
    const other = await mailroom.admin.createProject({ name: 'Other' });
    secret = acme.secret;
    otherSecret = other.secret;
    projectId = acme.project.id;
    ({ url: base, close } = await binder.start(mailroom));
  });
  afterEach(async () => {
    await close();
    await mailroom.close();
  });

  const call = (
    method: string,
    path: string,
    body?: unknown,
    auth: string | null = secret,
  ): Promise<Answer> => callApi<Answer['json']>(base, method, path, body, auth);

  /** The answer, checked to be a 200 with the success envelope. */
  async function ok(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const answer = await call(method, path, body);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toMatchObject({ statusCode: 200, message: expect.any(String) });
    return answer.json.data;
  }

  /** A 4xx with the error envelope, naming `field` in an issue's path and in the message. */
  async function refused(answer: Promise<Answer>, status: number, field?: string): Promise<Answer> {
    const a = await answer;
    expect(a.status, a.text).toBe(status);
    expect(a.json).toMatchObject({
      statusCode: status,
      code: expect.any(String),
      message: expect.any(String),
    });
    if (field !== undefined) {
      expect(a.json.issues?.map((i) => i.path[0])).toContain(field);
      expect(a.json.message).toContain(field);
    }
    return a;
  }

  describe('templates', () => {
    it('creates, lists in pages, gets, updates to a new version, and removes', async () => {
      await refused(
        call('POST', '/templates', { ref: 'welcome', format: 'mjml', source: MJML('Hi') }, null),
        401,
      );
      const created = (
        await ok('POST', '/templates', {
          ref: 'welcome',
          format: 'mjml',
          source: MJML('Hi'),
          subject: 'Welcome {{ profile.firstName }}',
        })
      ).template;
      expect(created).toMatchObject({
        ref: 'welcome',
        format: 'mjml',
        version: 1,
        subject: 'Welcome {{ profile.firstName }}',
      });
      expect(created).toMatchObject({ createdAt: START.toISOString(), updatedAt: START.toISOString() });
      await refused(call('POST', '/templates', { ref: 'welcome', format: 'text', source: 'x' }), 409);
      for (const ref of ['alpha', 'zeta'])
        await ok('POST', '/templates', { ref, format: 'text', source: `Hi from ${ref}` });

      const first = await ok('GET', '/templates?limit=2');
      expect((first.templates as Array<{ ref: string }>).map((t) => t.ref)).toEqual(['alpha', 'welcome']);
      expect(first.nextCursor).toBe('welcome');
      const second = await ok('GET', '/templates?limit=2&cursor=welcome');
      expect((second.templates as Array<{ ref: string }>).map((t) => t.ref)).toEqual(['zeta']);
      expect(second.nextCursor).toBeNull();
      // Another project sees none of them.
      expect((await call('GET', '/templates', undefined, otherSecret)).json.data.templates).toEqual([]);
      await refused(call('GET', '/templates/welcome', undefined, otherSecret), 404);
      await refused(call('PUT', '/templates/welcome', { source: 'x' }, otherSecret), 404);
      await refused(call('DELETE', '/templates/welcome', undefined, otherSecret), 404);

      clock.advance(60_000);
      const updated = (await ok('PUT', '/templates/welcome', { source: MJML('Hello again') })).template;
      // Format and subject not given: kept.
      expect(updated).toMatchObject({
        version: 2,
        format: 'mjml',
        subject: 'Welcome {{ profile.firstName }}',
      });
      expect(updated).toMatchObject({ createdAt: START.toISOString(), updatedAt: clock.now().toISOString() });
      const got = (await ok('GET', '/templates/welcome')).template as { source: string; version: number };
      expect(got).toMatchObject({ version: 2, source: MJML('Hello again') });
      const text = (
        await ok('PUT', '/templates/welcome', { format: 'text', source: 'Plain {{ x }}', subject: null })
      ).template;
      expect(text).toMatchObject({ version: 3, format: 'text', subject: null });

      expect(await ok('DELETE', '/templates/welcome')).toEqual({ ref: 'welcome' });
      await refused(call('GET', '/templates/welcome'), 404);
      await refused(call('DELETE', '/templates/welcome'), 404);
      await refused(call('PUT', '/templates/welcome', { source: 'x' }), 404);
      // A removed ref may be created again, from version 1.
      expect(
        (await ok('POST', '/templates', { ref: 'welcome', format: 'text', source: 'x' })).template,
      ).toMatchObject({
        version: 1,
      });
      await refused(call('PATCH', '/templates/welcome', { source: 'x' }), 405);
    });

    it('validates a source without saving it: MJML and Liquid problems with their lines', async () => {
      const broken = await ok('POST', '/templates/draft/validate', {
        format: 'mjml',
        source: BROKEN_MJML,
        subject: 'Hi {% if vip %}',
      });
      expect(broken.valid).toBe(false);
      expect(broken.problems).toEqual([
        {
          field: 'source',
          line: 5,
          column: null,
          message: expect.stringContaining('Attribute foo is illegal'),
        },
        { field: 'source', line: 6, column: null, message: expect.stringContaining('mj-textt') },
        { field: 'subject', line: 1, column: 4, message: expect.stringContaining('not closed') },
      ]);
      const liquid = await ok('POST', '/templates/draft/validate', {
        format: 'html',
        source: '<p>one</p>\n<p>two</p>\n{% for x in list %}<p>{{ x }}</p>',
      });
      expect(liquid.problems).toEqual([
        { field: 'source', line: 3, column: 1, message: expect.stringContaining('not closed') },
      ]);
      expect(await ok('POST', '/templates/draft/validate', { format: 'mjml', source: MJML('Hi') })).toEqual({
        valid: true,
        problems: [],
      });
      // Nothing was saved.
      await refused(call('GET', '/templates/draft'), 404);
      // No template to take the format and source from: both named.
      const missing = await refused(call('POST', '/templates/draft/validate', {}), 400, 'format');
      expect(missing.json.issues?.map((i) => i.path[0])).toEqual(['format', 'source']);
      // A stored template: absent fields are its own; an empty body checks it as it is.
      await ok('POST', '/templates', { ref: 'stored', format: 'mjml', source: MJML('Hi') });
      expect((await ok('POST', '/templates/stored/validate')).valid).toBe(true);
      expect((await ok('POST', '/templates/stored/validate', { source: BROKEN_MJML })).valid).toBe(false);
    });

    it('previews the stored template for given variables: subject, HTML and text', async () => {
      await ok('POST', '/templates', {
        ref: 'receipt',
        format: 'mjml',
        source: MJML('Thanks for order {{ order }},'),
        subject: 'Order {{ order }} for {{ profile.firstName }}',
      });
      const preview = await ok('POST', '/templates/receipt/preview', {
        variables: { order: 'A-42' },
        recipient: { address: 'ann@example.com', name: 'Ann Lee' },
      });
      expect(preview.subject).toBe('Order A-42 for Ann');
      expect(preview.html).toContain('Thanks for order A-42, Ann');
      expect(preview.text).toContain('Thanks for order A-42, Ann');
      // Without a body: the sample recipient.
      expect((await ok('POST', '/templates/receipt/preview')).subject).toBe('Order  for Ada');
      await refused(call('POST', '/templates/missing/preview', {}), 404);
      await refused(
        call('POST', '/templates/receipt/preview', { variables: { order: 1 }, vars: {} }),
        400,
        'vars',
      );
    });

    it('refuses bad input with the field named, and writes nothing', async () => {
      await refused(
        call('POST', '/templates', { ref: 'w', format: 'text', source: 'x', subjet: 'typo' }),
        400,
        'subjet',
      );
      await refused(call('POST', '/templates', { ref: 'w', format: 'docx', source: 'x' }), 400, 'format');
      await refused(call('POST', '/templates', { ref: 'bad ref!', format: 'text', source: 'x' }), 400, 'ref');
      await refused(call('POST', '/templates', { ref: 'w', format: 'text' }), 400, 'source');
      await refused(
        call('POST', '/templates', { ref: 'w', format: 'text', source: 'x', subject: 'a\nb' }),
        400,
        'subject',
      );
      await refused(call('POST', '/templates', ['not', 'an', 'object']), 400);
      await refused(call('POST', '/templates', '{"ref": '), 400);
      // Broken MJML: 400 with each problem's line, at `source`.
      const mjml = await refused(
        call('POST', '/templates', { ref: 'w', format: 'mjml', source: BROKEN_MJML }),
        400,
        'source',
      );
      expect(mjml.json.issues?.map((i) => i.message)).toEqual([
        expect.stringMatching(/^line 5 <mj-text>: /),
        expect.stringMatching(/^line 6 <mj-textt>: /),
      ]);
      await refused(
        call('POST', '/templates', { ref: 'w', format: 'text', source: 'x', subject: '{{ a' }),
        400,
        'subject',
      );
      // Over the cap of 1 MiB (within the body limit): 400 naming `source`.
      const large = `<p>${'a'.repeat(1024 * 1024)}</p>`;
      const tooLarge = await refused(
        call('POST', '/templates', { ref: 'w', format: 'html', source: large }),
        400,
        'source',
      );
      expect(tooLarge.json.message).toContain('1048576 bytes');
      // 10 MB: over the request body limit, refused before it is read.
      const huge = await call('POST', '/templates', {
        ref: 'w',
        format: 'html',
        source: 'a'.repeat(10 * 1024 * 1024),
      });
      expect(huge.status).toBe(413);
      expect(huge.json.code).toBe('PAYLOAD_TOO_LARGE');
      expect((await ok('GET', '/templates')).templates).toEqual([]);

      // An update refused leaves the version before it whole.
      await ok('POST', '/templates', { ref: 'w', format: 'mjml', source: MJML('Hi'), subject: 'S' });
      await refused(call('PUT', '/templates/w', { source: BROKEN_MJML }), 400, 'source');
      await refused(call('PUT', '/templates/w', { source: MJML('Hi'), ref: 'other' }), 400, 'ref');
      await refused(call('PUT', '/templates/w', { source: large }), 400, 'source');
      await refused(
        call('PUT', '/templates/w', { format: 'text', source: 'x', subject: '{% if %}' }),
        400,
        'subject',
      );
      expect((await ok('GET', '/templates/w')).template).toMatchObject({
        version: 1,
        source: MJML('Hi'),
        subject: 'S',
      });
      await refused(call('GET', '/templates?limit=0'), 400, 'limit');
      await refused(call('GET', '/templates?limit=abc'), 400, 'limit');
    });

    it('concurrent updates each make their own version; none is lost', async () => {
      await ok('POST', '/templates', { ref: 'busy', format: 'text', source: 'v1' });
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => call('PUT', '/templates/busy', { source: `update ${i}` })),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      const versions = answers.map((a) => (a.json.data.template as { version: number }).version);
      expect([...versions].sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
      // The stored one is the update that got the last version.
      const last = answers[versions.indexOf(9)]?.json.data.template as { source: string };
      expect((await ok('GET', '/templates/busy')).template).toMatchObject({
        version: 9,
        source: last.source,
      });
    });

    it('a broadcast accepted before an update renders the version it was accepted with', async () => {
      await mailroom.admin.addSender(projectId, { address: SENDER });
      await ok('POST', '/templates', {
        ref: 'news',
        format: 'mjml',
        source: MJML('Version one for'),
        subject: 'V1',
      });
      const scheduleFor = new Date(START.getTime() + 3_600_000).toISOString();
      const accepted = await call('POST', '/send/mail/broadcast', {
        sender: SENDER,
        template: { ref: 'news' },
        recipients: [{ address: 'ann@example.com', name: 'Ann Lee' }],
        options: { scheduleFor },
      });
      expect(accepted.status, accepted.text).toBe(200);
      await ok('PUT', '/templates/news', { source: MJML('Version two for'), subject: 'V2' });
      // A message accepted after the update takes the new version.
      const sent = await call('POST', '/send/mail', {
        sender: SENDER,
        template: { ref: 'news' },
        recipients: [{ address: 'bob@example.com', name: 'Bob Ray' }],
      });
      expect(sent.status, sent.text).toBe(200);
      await mailroom.worker.drain();
      clock.advance(3_600_000);
      await mailroom.worker.drain();
      const [ann] = transport.messagesTo('ann@example.com');
      const [bob] = transport.messagesTo('bob@example.com');
      expect(ann?.subject).toBe('V1');
      expect(ann?.html).toContain('Version one for Ann');
      expect(ann?.html).not.toContain('Version two');
      expect(bob?.subject).toBe('V2');
      expect(bob?.html).toContain('Version two for Bob');
    });
  });

  describe('senders', () => {
    it('lists in pages, adds, refuses a duplicate and unknown fields, and removes', async () => {
      const added = (await ok('POST', '/senders', { address: 'News@ACME.test', name: 'Acme News' })).sender;
      expect(added).toEqual({
        address: 'News@acme.test',
        name: 'Acme News',
        dkimSelector: null,
        createdAt: START.toISOString(),
      });
      await refused(call('POST', '/senders', { address: 'News@acme.test' }), 409);
      await refused(call('POST', '/senders', { address: 'not-an-address' }), 400, 'address');
      await refused(call('POST', '/senders', { address: 'a@acme.test', dkim: {} }), 400, 'dkim');
      await ok('POST', '/senders', { address: 'alerts@acme.test' });
      const first = await ok('GET', '/senders?limit=1');
      expect((first.senders as Array<{ address: string }>).map((s) => s.address)).toEqual(['News@acme.test']);
      const second = await ok(
        'GET',
        `/senders?limit=1&cursor=${encodeURIComponent(String(first.nextCursor))}`,
      );
      expect((second.senders as Array<{ address: string }>).map((s) => s.address)).toEqual([
        'alerts@acme.test',
      ]);
      expect((await call('GET', '/senders', undefined, otherSecret)).json.data.senders).toEqual([]);

      await refused(call('DELETE', '/senders/alerts%40acme.test', undefined, otherSecret), 404);
      expect(await ok('DELETE', '/senders/alerts%40ACME.test')).toEqual({ address: 'alerts@ACME.test' });
      await refused(call('DELETE', '/senders/alerts%40acme.test'), 404);
      // Requests from a removed sender are refused.
      const refusedSend = await call('POST', '/send/mail', {
        sender: 'alerts@acme.test',
        subject: 'Hi',
        message: 'Hi',
        recipients: ['ann@example.com'],
      });
      expect(refusedSend.json.code).toBe('SENDER_NOT_ALLOWED');
    });
  });

  describe('suppressions', () => {
    it('adds, lists with reason and date, searches, pages and lifts', async () => {
      for (const [address, reason] of [
        ['ann@shop.test', 'complaint'],
        ['bob@SHOP.test', undefined],
        ['ann@mail.test', 'hard-bounce'],
      ] as const) {
        clock.advance(1000);
        const added = (
          await ok('POST', '/suppressions', { address, ...(reason ? { reason } : {}), detail: 'by hand' })
        ).suppression;
        expect(added).toMatchObject({ reason: reason ?? 'manual', createdAt: clock.now().toISOString() });
      }
      const all = await ok('GET', '/suppressions');
      expect(all.suppressions).toEqual([
        {
          address: 'ann@mail.test',
          reason: 'hard-bounce',
          detail: 'by hand',
          createdAt: '2031-05-01T08:00:03.000Z',
        },
        {
          address: 'ann@shop.test',
          reason: 'complaint',
          detail: 'by hand',
          createdAt: '2031-05-01T08:00:01.000Z',
        },
        {
          address: 'bob@shop.test',
          reason: 'manual',
          detail: 'by hand',
          createdAt: '2031-05-01T08:00:02.000Z',
        },
      ]);
      expect(all.nextCursor).toBeNull();
      const search = async (q: string, extra = '') =>
        (
          (await ok('GET', `/suppressions?q=${encodeURIComponent(q)}${extra}`)).suppressions as Array<{
            address: string;
          }>
        ).map((s) => s.address);
      expect(await search('ann')).toEqual(['ann@mail.test', 'ann@shop.test']);
      expect(await search('@SHOP.test')).toEqual(['ann@shop.test', 'bob@shop.test']);
      expect(await search('@shop.test', '&limit=1&cursor=ann%40shop.test')).toEqual(['bob@shop.test']);
      expect(await search('carol')).toEqual([]);
      expect((await call('GET', '/suppressions', undefined, otherSecret)).json.data.suppressions).toEqual([]);

      await refused(
        call('POST', '/suppressions', { address: 'x@shop.test', reason: 'bored' }),
        400,
        'reason',
      );
      await refused(call('POST', '/suppressions', { address: 'x@shop.test', note: 'x' }), 400, 'note');
      await refused(call('DELETE', '/suppressions/ann%40shop.test', undefined, otherSecret), 404);
      expect(await ok('DELETE', '/suppressions/ann%40shop.test')).toEqual({ address: 'ann@shop.test' });
      await refused(call('DELETE', '/suppressions/ann%40shop.test'), 404);
      expect(await search('ann')).toEqual(['ann@mail.test']);
    });
  });

  it('documents every route of the management API in the OpenAPI document', async () => {
    const doc = (await call('GET', '/openapi.json', undefined, null)).json as unknown as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, unknown> };
    };
    const expected: Record<string, string[]> = {
      '/templates': ['get', 'post'],
      '/templates/{ref}': ['get', 'put', 'delete'],
      '/templates/{ref}/validate': ['post'],
      '/templates/{ref}/preview': ['post'],
      '/senders': ['get', 'post'],
      '/senders/{email}': ['delete'],
      '/suppressions': ['get', 'post'],
      '/suppressions/{email}': ['delete'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(Object.keys(doc.paths[path] ?? {}).sort(), path).toEqual([...methods].sort());
      for (const method of methods) {
        const operation = doc.paths[path]?.[method];
        expect(operation?.responses['200'], `${method} ${path}`).toBeDefined();
        expect(operation?.responses['400'], `${method} ${path}`).toBeDefined();
      }
    }
    for (const name of [
      'TemplateCreateRequest',
      'TemplateUpdateRequest',
      'Template',
      'Suppression',
      'Sender',
    ]) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    expect(doc.components.schemas.TemplateCreateRequest).toMatchObject({ additionalProperties: false });
  });
});

describe('the access each route declares (enforced in one place, route-access.ts)', () => {
  it.each([
    ['/templates', { GET: 'read', HEAD: 'read', POST: 'full' }, {}],
    ['/templates/welcome', { GET: 'read', HEAD: 'read', PUT: 'full', DELETE: 'full' }, { ref: 'welcome' }],
    // Validate and preview change nothing: a read key may call them.
    ['/templates/a%2Fb/validate', { POST: 'read' }, { ref: 'a/b' }],
    ['/templates/welcome/preview', { POST: 'read' }, { ref: 'welcome' }],
    ['/senders', { GET: 'read', HEAD: 'read', POST: 'full' }, {}],
    ['/senders/news%40acme.test', { DELETE: 'full' }, { email: 'news@acme.test' }],
    ['/suppressions', { GET: 'read', HEAD: 'read', POST: 'full' }, {}],
    ['/suppressions/ann%40example.com', { DELETE: 'full' }, { email: 'ann@example.com' }],
  ] as const)('%s', (path, access, params) => {
    const route = matchRoute(path, true);
    expect(route?.access).toEqual(access);
    expect(route?.allow).toEqual(Object.keys(access));
    expect(route?.params ?? {}).toEqual(params);
  });

  it('matches no deeper or broken path', () => {
    for (const path of ['/templates/a/b', '/templates/a/render', '/senders/a/b', '/suppressions/%E0%A4%A']) {
      expect(matchRoute(path, true), path).toBeUndefined();
    }
  });
});
