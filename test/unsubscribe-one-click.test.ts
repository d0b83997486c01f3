import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, type MailroomOptions } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import express from 'express';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SinkMessage, type SmtpSink, startSmtpSink, toReceivedMessage } from './support/smtp-sink.js';

/**
 * Suppression and RFC 8058 one-click unsubscribe, end to end: broadcasts go over real SMTP to a loopback
 * sink, their List-Unsubscribe links are followed over HTTP the way mail clients do (Express and Fastify),
 * and the next broadcast skips whoever unsubscribed.
 */

const PREFIX = '/api';
const SENDER = 'news@acme.test';

interface Binder {
  name: string;
  /** Serves `mailroom` under {@link PREFIX} on 127.0.0.1; returns the port and how to stop. */
  listen: (mailroom: Mailroom) => Promise<{ port: number; close: () => Promise<void> }>;
}

const BINDERS: Binder[] = [
  {
    name: 'express',
    async listen(mailroom) {
      const app = express();
      app.use(PREFIX, mailroomRouter(mailroom));
      const server = await new Promise<Server>((resolve, reject) => {
        const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
      });
      return {
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      };
    },
  },
  {
    name: 'fastify',
    async listen(mailroom) {
      const app = Fastify();
      await app.register(mailroomPlugin, { mailroom, prefix: PREFIX });
      await app.listen({ host: '127.0.0.1', port: 0 });
      return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
    },
  },
];

/** The value of a header as sent (unfolded), from the raw message. */
function header(message: SinkMessage, name: string): string | undefined {
  return toReceivedMessage(message.parsed).headers[name.toLowerCase()];
}

/** The one-click URL of a message, checked for the RFC 8058 shape. */
function unsubscribeUrl(message: SinkMessage): string {
  const value = header(message, 'List-Unsubscribe') ?? '';
  const m = /^<(https?:\/\/[^>\s]+)>$/.exec(value);
  if (!m?.[1]) throw new Error(`not a one-click List-Unsubscribe: ${value}`);
  return m[1];
}

function messageTo(sink: SmtpSink, address: string): SinkMessage {
  const found = sink.messages.find((m) => m.envelope.rcptTo.includes(address));
  if (!found) throw new Error(`no message to ${address}`);
  return found;
}

/** A POST as mail clients send it (RFC 8058 section 3.2): form-encoded, no cookies, no redirects followed. */
function oneClick(url: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
    redirect: 'manual',
  });
}

/** The same URL with one character of its MAC changed (still a well-formed token). */
function tampered(url: string): string {
  const i = url.length - 10;
  const swapped = url[i] === 'A' ? 'B' : 'A';
  return `${url.slice(0, i)}${swapped}${url.slice(i + 1)}`;
}

describe.each(BINDERS)('one-click unsubscribe through $name and SMTP', (binder) => {
  let sink: SmtpSink;
  let dbPath: string;
  let mailroom: Mailroom;
  let server: { port: number; close: () => Promise<void> } | undefined;
  let secret: string;
  let projectId: string;

  const base = () => `http://127.0.0.1:${server?.port ?? 0}${PREFIX}`;

  async function open(extra: Partial<MailroomOptions> = {}): Promise<void> {
    mailroom = createMailroom({
      store: sqlStore({ url: dbPath }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      unsubscribe: { baseUrl: base },
      // MIME built on the main thread, as `'auto'` does on one core (the last describe builds it on a
      // render thread): a thread started from the sources costs about a second of CPU per engine, and
      // these tests open one or two engines each.
      worker: { renderThreads: 0 },
      ...extra,
    });
    server = await binder.listen(mailroom);
  }

  async function shut(): Promise<void> {
    await server?.close();
    server = undefined;
    await mailroom.close();
  }

  async function broadcast(addresses: string[]): Promise<string> {
    const res = await fetch(`${base()}/send/mail/broadcast`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'News for {{ profile.firstName }}',
        sender: SENDER,
        message: '<p>Hello</p>',
        recipients: addresses,
      }),
    });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { broadcastRef: string } };
    await mailroom.worker.drain();
    return data.broadcastRef;
  }

  const status = async (address: string) => (await mailroom.store.getProfile(projectId, address))?.status;

  beforeEach(async () => {
    sink = await startSmtpSink();
    dbPath = join(mkdtempSync(join(tmpdir(), 'mailroom-unsub-')), 'mailroom.db');
    await open();
    const created = await mailroom.admin.createProject({ name: 'Acme & Co' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
  });

  afterEach(async () => {
    await shut();
    await sink.close();
  });

  it('puts valid one-click headers on broadcast messages only, one distinct link per recipient', async () => {
    await broadcast(['ann@example.test', 'bob@example.test']);
    await mailroom.send(secret, {
      subject: 'Receipt',
      sender: SENDER,
      message: 'Thanks',
      recipients: 'ann@example.test',
    });
    await mailroom.worker.drain();
    expect(sink.messages).toHaveLength(3);
    const [ann, bob] = ['ann@example.test', 'bob@example.test'].map((a) => messageTo(sink, a) as SinkMessage);
    for (const message of [ann, bob] as SinkMessage[]) {
      expect(header(message, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
      const url = new URL(unsubscribeUrl(message));
      expect(`${url.origin}${url.pathname}`.startsWith(`${base()}/unsubscribe/`)).toBe(true);
      expect(url.search).toBe('');
    }
    expect(unsubscribeUrl(ann as SinkMessage)).not.toBe(unsubscribeUrl(bob as SinkMessage));
    // The token does not show the address.
    expect(unsubscribeUrl(ann as SinkMessage)).not.toContain('ann');
    const receipt = sink.messages.find((m) => header(m, 'Subject') === 'Receipt') as SinkMessage;
    expect(header(receipt, 'List-Unsubscribe')).toBeUndefined();
    expect(header(receipt, 'List-Unsubscribe-Post')).toBeUndefined();
  });

  it('GET shows a confirmation page and changes nothing; the one-click POST unsubscribes, idempotently', async () => {
    await broadcast(['ann@example.test', 'bob@example.test', 'cat@example.test']);
    const annUrl = unsubscribeUrl(messageTo(sink, 'ann@example.test'));
    const bobUrl = unsubscribeUrl(messageTo(sink, 'bob@example.test'));

    for (const method of ['GET', 'HEAD']) {
      const page = await fetch(annUrl, { method, redirect: 'manual' });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('set-cookie')).toBeNull();
      if (method === 'GET') {
        const html = await page.text();
        expect(html).toMatch(/<form method="post" action="[^"]+">/);
        expect(html).toContain('name="List-Unsubscribe" value="One-Click"');
        expect(html).toContain('Acme &amp; Co');
        expect(html).toContain('a***@example.test');
      }
    }
    expect(await status('ann@example.test')).toBe('subscribed');

    const done = await oneClick(annUrl);
    expect(done.status).toBe(200);
    expect(done.headers.get('location')).toBeNull();
    expect(done.headers.get('set-cookie')).toBeNull();
    expect(await done.text()).toContain('unsubscribed');
    expect(await status('ann@example.test')).toBe('unsubscribed');
    // A mail client retrying, or the person clicking twice.
    expect((await oneClick(annUrl)).status).toBe(200);
    expect(await status('ann@example.test')).toBe('unsubscribed');

    // The confirmation page's own form posts multipart in some browsers: also fine.
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    const multipart = await fetch(bobUrl, { method: 'POST', body: form, redirect: 'manual' });
    expect(multipart.status).toBe(200);
    expect(await status('bob@example.test')).toBe('unsubscribed');
    expect(await status('cat@example.test')).toBe('subscribed');

    sink.clear();
    const next = await broadcast(['ann@example.test', 'bob@example.test', 'cat@example.test']);
    expect(sink.messages.map((m) => m.envelope.rcptTo[0])).toEqual(['cat@example.test']);
    const view = await mailroom.getMailing(secret, next);
    expect(view.counts).toMatchObject({ sent: 1, skipped: 2 });
  });

  it('refuses forged and altered tokens with 404 and changes nothing', async () => {
    await broadcast(['ann@example.test', 'bob@example.test']);
    const annUrl = unsubscribeUrl(messageTo(sink, 'ann@example.test'));
    const bobUrl = unsubscribeUrl(messageTo(sink, 'bob@example.test'));
    const annToken = annUrl.slice(annUrl.lastIndexOf('/') + 1);
    const bobToken = bobUrl.slice(bobUrl.lastIndexOf('/') + 1);
    const [annDelivery, annMac] = annToken.split('.');
    const [bobDelivery] = bobToken.split('.');
    const forged = [
      tampered(annUrl),
      // Ann's MAC on Bob's delivery: a MAC vouches for one delivery only.
      `${base()}/unsubscribe/${bobDelivery}.${annMac}`,
      `${base()}/unsubscribe/${annDelivery}`,
      `${base()}/unsubscribe/dlv_doesnotexist.${annMac}`,
      `${base()}/unsubscribe/not-a-token`,
      `${base()}/unsubscribe/${annToken}x`,
    ];
    for (const url of forged) {
      const get = await fetch(url);
      expect(get.status, url).toBe(404);
      expect(await get.text()).not.toContain('<form');
      expect((await oneClick(url)).status, url).toBe(404);
    }
    // A broken escape: Fastify refuses the URL itself (400), the neutral handler finds no route (404).
    expect([400, 404]).toContain((await oneClick(`${annUrl}%ZZ`)).status);
    expect(await status('ann@example.test')).toBe('subscribed');
    expect(await status('bob@example.test')).toBe('subscribed');
    // The genuine link still works.
    expect((await oneClick(bobUrl)).status).toBe(200);
    expect(await status('bob@example.test')).toBe('unsubscribed');
  });

  it('links keep working after a restart: the generated secret is kept in the store', async () => {
    await broadcast(['ann@example.test']);
    const url = unsubscribeUrl(messageTo(sink, 'ann@example.test'));
    await shut();
    await open();
    const moved = `${base()}${new URL(url).pathname.slice(PREFIX.length)}`;
    expect((await fetch(moved)).status).toBe(200);
    expect((await oneClick(moved)).status).toBe(200);
    expect(await status('ann@example.test')).toBe('unsubscribed');
  });

  it('suppressed and unsubscribed addresses get no broadcast; a suppressed one gets no message either', async () => {
    await mailroom.admin.suppress(projectId, 'Sup@Example.COM', 'complaint', 'marked as spam');
    await mailroom.admin.setSubscription(projectId, 'gone@example.test', 'unsubscribed');
    const ref = await broadcast(['ok@example.test', 'Sup@example.com', 'gone@example.test']);
    expect(sink.messages.map((m) => m.envelope.rcptTo[0])).toEqual(['ok@example.test']);
    expect((await mailroom.getMailing(secret, ref)).counts).toMatchObject({
      sent: 1,
      suppressed: 1,
      skipped: 1,
    });
    const suppressed = await mailroom.getDelivery(secret, ref, 'Sup@example.com');
    expect(suppressed.status).toBe('suppressed');
    expect(suppressed.lastError).toMatch(/suppress/);
    expect((await mailroom.getDelivery(secret, ref, 'gone@example.test')).lastError).toBe('unsubscribed');

    // A single message: the unsubscribed address gets it (it is not a list), the suppressed one does not.
    sink.clear();
    const single = await mailroom.send(secret, {
      subject: 'Receipt',
      sender: SENDER,
      message: 'Thanks',
      recipients: ['Sup@example.com', 'gone@example.test'],
    });
    await mailroom.worker.drain();
    expect(sink.messages.map((m) => m.envelope.rcptTo[0])).toEqual(['gone@example.test']);
    expect((await mailroom.getDelivery(secret, single.ref, 'Sup@example.com')).status).toBe('suppressed');

    expect(await mailroom.admin.unsuppress(projectId, 'Sup@EXAMPLE.com')).toBe(true);
    sink.clear();
    await broadcast(['Sup@example.com']);
    expect(sink.messages.map((m) => m.envelope.rcptTo[0])).toEqual(['Sup@example.com']);
  });
});

describe('one-click unsubscribe with render threads and a configured secret', () => {
  it('the headers are there when the MIME is built on a render thread, signed with the given secret', async () => {
    const sink = await startSmtpSink();
    const url = join(mkdtempSync(join(tmpdir(), 'mailroom-unsub-')), 'mailroom.db');
    const make = (secret: string) =>
      createMailroom({
        store: sqlStore({ url }),
        transport: smtpTransport({ host: sink.host, port: sink.port }),
        worker: { renderThreads: 1 },
        unsubscribe: { baseUrl: 'https://mail.example.test/api/', secret },
      });
    let mailroom = make('a'.repeat(32));
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Threads' });
      await mailroom.admin.addSender(project.id, { address: SENDER });
      await mailroom.broadcast(secret, {
        subject: 'S',
        sender: SENDER,
        message: 'M',
        recipients: 'ann@example.test',
      });
      await mailroom.worker.drain();
      const [message] = await sink.waitFor(1);
      const link = unsubscribeUrl(message as SinkMessage);
      expect(link.startsWith('https://mail.example.test/api/unsubscribe/')).toBe(true);
      expect(header(message as SinkMessage, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
      const token = link.slice(link.lastIndexOf('/') + 1);
      expect((await mailroom.resolveUnsubscribe(token)).address).toBe('ann@example.test');
      await mailroom.close();
      // Another secret: the old links are worthless.
      mailroom = make('b'.repeat(32));
      await expect(mailroom.resolveUnsubscribe(token)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await mailroom.close();
      await sink.close();
    }
  });

  it('refuses a short secret and a base URL that is not http(s)', async () => {
    const { memoryStore, memoryTransport } = await import('@mailroom/memory');
    const make = (unsubscribe: MailroomOptions['unsubscribe']) => () =>
      createMailroom({
        store: memoryStore(),
        transport: memoryTransport(),
        ...(unsubscribe ? { unsubscribe } : {}),
      });
    expect(make({ baseUrl: 'https://x.test', secret: 'short' })).toThrow(/at least 16/);
    expect(make({ baseUrl: 'ftp://x.test' })).toThrow(/http/);
    expect(make({ baseUrl: 'not a url' })).toThrow(/absolute/);
    const without = make(undefined)();
    await expect(without.resolveUnsubscribe('anything')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await without.close();
  });
});
