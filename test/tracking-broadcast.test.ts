import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, type MailroomOptions } from '@mailroom/core';
import { signClickToken, signOpenToken } from '@mailroom/core/testing';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SinkMessage, type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * Open and click tracking end to end: a broadcast over real SMTP to a loopback sink (parsed with
 * mailparser), its tracked links and pixel followed over HTTP (Fastify on 127.0.0.1), hits recorded
 * behind the answer and shown per broadcast. Tampered tokens get 404 and record nothing.
 */

const SENDER = 'news@acme.test';
const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

const HTML = `<html><head><title>News</title></head><body>
<p>Hello {{ profile.firstName }}</p>
<a href="https://shop.example.test/sale?src=mail&amp;x=1">Sale</a>
<a class="btn" href="https://blog.example.test/post">Blog</a>
<a href="https://shop.example.test/p?u={{ user_id }}">Your page</a>
<a href="mailto:help@acme.test">Mail us</a>
<a href="tel:+15550100">Call</a>
<a href="#top">Top</a>
<a href="https://acme.test/unsubscribe?u={{ user_id }}">Unsubscribe</a>
<a data-mailroom-notrack href="https://private.example.test/">Private</a>
<a href="https://shop.example.test/sale?src=mail&amp;x=1">Sale again</a>
</body></html>`;

describe('open and click tracking over SMTP and HTTP', () => {
  let sink: SmtpSink;
  let dbPath: string;
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let port = 0;
  let secret: string;
  let projectId: string;

  const base = () => `http://127.0.0.1:${port}`;

  async function open(extra: Partial<MailroomOptions> = {}): Promise<void> {
    mailroom = createMailroom({
      store: sqlStore({ url: dbPath }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      tracking: { baseUrl: base, opens: true, clicks: true, scannerWindowMs: 0, flushMs: 20 },
      // MIME built on the main thread: what these tests prove does not depend on where the bytes are built,
      // and a render thread per test cost each a thread's start; the threads' own test says `renderThreads: 1`.
      worker: { renderThreads: 0 },
      ...extra,
    });
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  }

  async function broadcast(options: Record<string, unknown> = {}): Promise<string> {
    const res = await mailroom.broadcast(secret, {
      subject: 'News',
      sender: SENDER,
      message: HTML,
      recipients: [
        { address: 'ann@example.test', name: 'Ann', variables: { user_id: 'ann-1' } },
        { address: 'bob@example.test', name: 'Bob', variables: { user_id: 'bob&2' } },
      ],
      options,
    });
    await mailroom.worker.drain();
    return res.ref;
  }

  const htmlTo = (address: string): string => {
    const message = sink.messages.find((m) => m.envelope.rcptTo.includes(address)) as SinkMessage;
    return String(message.parsed.html);
  };
  const textTo = (address: string): string =>
    String((sink.messages.find((m) => m.envelope.rcptTo.includes(address)) as SinkMessage).parsed.text);
  const trackedLinks = (html: string): string[] =>
    [...html.matchAll(/href="([^"]+\/t\/c\/[^"]+)"/g)].map((m) => m[1] as string);
  const pixelOf = (html: string): string => {
    const m = /<img src="([^"]+\/t\/o\/[^"]+\.gif)"[^>]*\/><\/body>/.exec(html);
    if (!m?.[1]) throw new Error('no pixel at the end of the body');
    return m[1];
  };
  const follow = (url: string, userAgent = BROWSER) =>
    fetch(url, { redirect: 'manual', headers: { 'user-agent': userAgent } });

  async function settled(ref: string, check: (t: Awaited<ReturnType<Mailroom['getTracking']>>) => boolean) {
    for (let i = 0; i < 100; i++) {
      const tracking = await mailroom.getTracking(secret, ref);
      if (check(tracking)) return tracking;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return mailroom.getTracking(secret, ref);
  }

  beforeEach(async () => {
    sink = await startSmtpSink();
    dbPath = join(mkdtempSync(join(tmpdir(), 'mailroom-track-')), 'mailroom.db');
    await open();
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
  });

  afterEach(async () => {
    await app.close();
    await mailroom.close();
    await sink.close();
  });

  it('rewrites the http(s) links of the HTML once per link, adds the pixel, and leaves the rest alone', async () => {
    await broadcast();
    const ann = htmlTo('ann@example.test');
    const links = trackedLinks(ann);
    // Sale (twice: the same link map entry), Blog, and the Liquid link.
    expect(links).toHaveLength(4);
    for (const link of links) expect(link.startsWith(`${base()}/t/c/`)).toBe(true);
    expect(ann).toContain('href="mailto:help@acme.test"');
    expect(ann).toContain('href="tel:+15550100"');
    expect(ann).toContain('href="#top"');
    expect(ann).toContain('href="https://acme.test/unsubscribe?u=ann-1"');
    expect(ann).toContain('href="https://private.example.test/"');
    expect(ann).not.toContain('shop.example.test');
    expect(ann).not.toContain('blog.example.test');
    expect(ann).not.toContain('ann@example.test');
    pixelOf(ann);
    // The text part keeps the original links.
    const text = textTo('ann@example.test');
    expect(text).toContain('https://shop.example.test/sale?src=mail&x=1');
    expect(text).toContain('https://shop.example.test/p?u=ann-1');
    expect(text).not.toContain('/t/c/');
    // Each recipient has their own tokens.
    expect(trackedLinks(htmlTo('bob@example.test'))[0]).not.toBe(links[0]);
  });

  it('redirects each link to its original (the recipient’s own for Liquid hrefs), serves the GIF, records both', async () => {
    const ref = await broadcast();
    const seen: Array<{ type: string; url: string | null; machine: boolean }> = [];
    mailroom.on('tracking', (e) => seen.push({ type: e.type, url: e.url, machine: e.machine }));
    const [sale, blog, mine] = trackedLinks(htmlTo('bob@example.test')) as [string, string, string];
    const res = await follow(sale);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://shop.example.test/sale?src=mail&x=1');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect((await follow(blog)).headers.get('location')).toBe('https://blog.example.test/post');
    expect((await follow(mine)).headers.get('location')).toBe('https://shop.example.test/p?u=bob&2');
    const annMine = trackedLinks(htmlTo('ann@example.test'))[2] as string;
    expect((await follow(annMine)).headers.get('location')).toBe('https://shop.example.test/p?u=ann-1');

    const pixel = await follow(pixelOf(htmlTo('bob@example.test')));
    expect(pixel.status).toBe(200);
    expect(pixel.headers.get('content-type')).toBe('image/gif');
    expect(pixel.headers.get('cache-control')).toContain('no-store');
    const gif = Buffer.from(await pixel.arrayBuffer());
    expect(gif.subarray(0, 6).toString('latin1')).toBe('GIF89a');
    expect(gif.length).toBe(42);
    // A second load is not a second open.
    await follow(pixelOf(htmlTo('bob@example.test')));

    const tracking = await settled(ref, (t) => t.clickTotals.human === 4 && t.opens.human === 1);
    expect(tracking.opens).toEqual({ human: 1, machine: 0 });
    expect(tracking.clicks).toEqual({ human: 2, machine: 0 });
    expect(tracking.clickTotals).toEqual({ human: 4, machine: 0 });
    expect(tracking.topLinks).toEqual([
      { index: 2, url: 'https://shop.example.test/p?u={{ user_id }}', human: 2, machine: 0 },
      { index: 0, url: 'https://shop.example.test/sale?src=mail&x=1', human: 1, machine: 0 },
      { index: 1, url: 'https://blog.example.test/post', human: 1, machine: 0 },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.filter((e) => e.type === 'email.opened')).toEqual([
      { type: 'email.opened', url: null, machine: false },
    ]);
    expect(
      seen
        .filter((e) => e.type === 'email.clicked')
        .map((e) => e.url)
        .sort(),
    ).toEqual([
      'https://blog.example.test/post',
      'https://shop.example.test/p?u=ann-1',
      'https://shop.example.test/p?u=bob&2',
      'https://shop.example.test/sale?src=mail&x=1',
    ]);
  });

  it('marks opens through mail-privacy proxies and scanner clicks as machine', async () => {
    const ref = await broadcast();
    await follow(pixelOf(htmlTo('ann@example.test')), 'Mozilla/5.0');
    await follow(
      pixelOf(htmlTo('bob@example.test')),
      'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
    );
    await follow(trackedLinks(htmlTo('ann@example.test'))[1] as string, 'python-requests/2.31');
    await fetch(trackedLinks(htmlTo('bob@example.test'))[1] as string, {
      method: 'HEAD',
      redirect: 'manual',
      headers: { 'user-agent': BROWSER },
    });
    const tracking = await settled(ref, (t) => t.opens.machine === 2 && t.clickTotals.machine === 2);
    expect(tracking.opens).toEqual({ human: 0, machine: 2 });
    expect(tracking.clickTotals).toEqual({ human: 0, machine: 2 });
  });

  it('judges clicks on every link within seconds of sending a scanner’s', async () => {
    await app.close();
    await mailroom.close();
    await open({
      tracking: { baseUrl: base, opens: true, clicks: true, scannerWindowMs: 60_000, flushMs: 20 },
    });
    const ref = await broadcast();
    // Ann's scanner follows every link at once; Bob clicks one.
    await Promise.all(trackedLinks(htmlTo('ann@example.test')).map((link) => follow(link)));
    await follow(trackedLinks(htmlTo('bob@example.test'))[1] as string);
    const early = await settled(ref, (t) => t.clickTotals.machine === 4);
    expect(early.clickTotals).toEqual({ human: 0, machine: 4 });
    // Bob's click is held until the window closes (or the engine shuts down), then recorded as a person's.
    await app.close();
    await mailroom.close();
    await open();
    const later = await mailroom.getTracking(secret, ref);
    expect(later.clickTotals).toEqual({ human: 1, machine: 4 });
  });

  it('answers 404 and records nothing for a tampered token, another project’s, and a link out of range', async () => {
    const ref = await broadcast();
    const [link, , liquid] = trackedLinks(htmlTo('ann@example.test')) as [string, string, string];
    const pixel = pixelOf(htmlTo('ann@example.test'));
    const token = link.slice(link.lastIndexOf('/') + 1);
    const [tokenProject, mailingId, deliveryId, sentAt] = token.split('.') as [
      string,
      string,
      string,
      string,
    ];
    const flip = (s: string, at: number) => `${s.slice(0, at)}${s[at] === 'A' ? 'B' : 'A'}${s.slice(at + 1)}`;
    const other = await mailroom.admin.createProject({ name: 'Other' });
    const key = await mailroom.store.ensureSetting('tracking-secret', 'unused-unused-unused', new Date());
    const fields = { projectId, mailingId, deliveryId, sentAt: Number.parseInt(sentAt, 36) };
    const bad = [
      flip(link, link.length - 5),
      flip(link, link.lastIndexOf('/') + 2),
      // A fixed link's tag on the Liquid entry's index, and on an index out of range.
      `${base()}/t/c/${token.split('.').slice(0, 4).join('.')}.2.${token.split('.')[5]}`,
      `${base()}/t/c/${token.split('.').slice(0, 4).join('.')}.a.${token.split('.')[5]}`,
      // The Liquid link's values on another index (a fixed link, one out of range): each set of values
      // is signed for the indexes that rendered it.
      liquid.replace(/\.2\.([^.]+\.[^.]+\.[^.]+)$/, '.0.$1'),
      liquid.replace(/\.2\.([^.]+\.[^.]+\.[^.]+)$/, '.3.$1'),
      flip(liquid, liquid.lastIndexOf('.') - 4),
      flip(liquid, liquid.lastIndexOf('.') - 2),
      `${base()}/t/c/${token.replace(tokenProject, other.project.id)}`,
      `${base()}/t/c/${signClickToken(key, { ...fields, projectId: other.project.id, index: 0 })}`,
      `${base()}/t/c/${signClickToken(key, { ...fields, index: 99 })}`,
      `${base()}/t/c/${signClickToken(key, { ...fields, index: 0, values: ['https://evil.example.test/'] })}`,
      `${base()}/t/c/${signClickToken('another-installation-key', { ...fields, index: 2, values: ['x'] })}`,
      `${base()}/t/c/${signClickToken('another-installation-key', { ...fields, index: 0 })}`,
      `${base()}/t/c/${signOpenToken(key, fields)}`,
      `${base()}/t/c/https%3A%2F%2Fevil.example.test`,
      `${base()}/t/c/`,
      flip(pixel, pixel.length - 8),
      `${base()}/t/o/${signOpenToken(key, { ...fields, projectId: other.project.id })}.gif`,
      `${base()}/t/o/${signClickToken(key, { ...fields, index: 0 })}.gif`,
    ];
    for (const url of bad) {
      const res = await follow(url);
      expect(res.status, url).toBe(404);
      expect(res.headers.get('location')).toBeNull();
    }
    // The genuine ones still work, and only they are recorded.
    expect((await follow(link)).status).toBe(302);
    expect((await follow(pixel)).status).toBe(200);
    const tracking = await settled(ref, (t) => t.clickTotals.human === 1 && t.opens.human === 1);
    expect(tracking.clickTotals).toEqual({ human: 1, machine: 0 });
    expect(tracking.opens).toEqual({ human: 1, machine: 0 });
  });

  it('tracks alike when render threads build the messages', async () => {
    await app.close();
    await mailroom.close();
    await open({ worker: { renderThreads: 1 } });
    const ref = await broadcast();
    const ann = htmlTo('ann@example.test');
    expect(trackedLinks(ann)).toHaveLength(4);
    expect(textTo('ann@example.test')).toContain('https://shop.example.test/p?u=ann-1');
    const res = await follow(trackedLinks(ann)[2] as string);
    expect(res.headers.get('location')).toBe('https://shop.example.test/p?u=ann-1');
    expect((await follow(pixelOf(ann))).status).toBe(200);
    const tracking = await settled(ref, (t) => t.opens.human === 1 && t.clickTotals.human === 1);
    expect(tracking.opens.human).toBe(1);
    expect(tracking.clickTotals.human).toBe(1);
  });

  it('lets a mailing turn tracking off, and opt its text part in', async () => {
    await broadcast({ track: { opens: false, clicks: false } });
    const ann = htmlTo('ann@example.test');
    expect(ann).not.toContain('/t/c/');
    expect(ann).not.toContain('/t/o/');
    expect(ann).toContain('href="https://shop.example.test/sale?src=mail&amp;x=1"');
    sink.clear();
    await broadcast({ track: { opens: false, textLinks: true } });
    expect(trackedLinks(htmlTo('ann@example.test'))).toHaveLength(4);
    expect(htmlTo('ann@example.test')).not.toContain('/t/o/');
    expect(textTo('ann@example.test')).toContain(`${base()}/t/c/`);
    expect(textTo('ann@example.test')).not.toContain('shop.example.test');
  });
});

describe('tracking off (the default)', () => {
  it('sends no rewritten link and no pixel, and has no tracking routes', async () => {
    const sink = await startSmtpSink();
    const mailroom = createMailroom({
      store: sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-track-off-')), 'mailroom.db') }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
    });
    const app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: SENDER });
      await mailroom.broadcast(secret, {
        subject: 'News',
        sender: SENDER,
        message: HTML,
        recipients: [{ address: 'ann@example.test', variables: { user_id: 'ann-1' } }],
      });
      await mailroom.worker.drain();
      const [message] = await sink.waitFor(1);
      const raw = (message as SinkMessage).raw.toString('latin1');
      expect(raw).not.toContain('/t/c/');
      expect(raw).not.toContain('/t/o/');
      expect(String((message as SinkMessage).parsed.html)).toBe(
        HTML.replace('{{ profile.firstName }}', 'ann').replaceAll('{{ user_id }}', 'ann-1'),
      );
      const port = (app.server.address() as AddressInfo).port;
      const res = await fetch(`http://127.0.0.1:${port}/t/c/x.y.z.1.0.AAAAAAAAAAAAAAAAAAAAAA`, {
        redirect: 'manual',
      });
      expect(res.status).toBe(404);
    } finally {
      await app.close();
      await mailroom.close();
      await sink.close();
    }
  });
});
