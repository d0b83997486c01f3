import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, manualClock } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * The signup pages on the contact layout (issue 38): the confirmation link's pages (confirm, confirmed,
 * expired with "send a new link", sent) and the thanks page of a form post look like the project's
 * preference centre (its name, colour and logo, the contact pages' headers) and speak the contact's
 * language (its `locale` trait: en, de, fr), or the browser's where no contact may be looked up. Real
 * SQLite, Express on loopback, the confirmation mail at an SMTP sink.
 */

const SENDER = 'news@acme.test';
const PROJECT = 'Acme <b>&</b> Co';
const LOGO =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const DAY = 24 * 3600_000;

describe('signup pages on the contact layout', () => {
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let server: Server;
  let base = '';
  let secret: string;
  let formRef: string;
  const clock = manualClock(new Date());

  async function signup(email: string): Promise<string> {
    const res = await fetch(`${base}/subscribe/${formRef}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(res.status).toBe(200);
    await mailroom.signups.settled();
    await mailroom.worker.drain();
    const message = sink.messages.filter((m) => m.envelope.rcptTo.includes(email)).at(-1);
    const link = /href="([^"]*\/confirm\/[^"]+)"/.exec(String(message?.parsed.html))?.[1];
    if (!link) throw new Error(`no confirmation link for ${email}`);
    return link;
  }

  /** The page's status, its headers that every contact page has, and its HTML. */
  async function page(url: string, init?: RequestInit): Promise<{ status: number; html: string }> {
    const res = await fetch(url, init);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toContain('img-src data:');
    return { status: res.status, html: await res.text() };
  }

  /** What the contact layout shows of the project: its name (escaped), logo and colour. */
  function expectBranded(html: string): void {
    expect(html).toContain('<div class="card">');
    expect(html).toContain(`<img src="${LOGO}" alt="">`);
    expect(html).toContain('--accent:#0a7d4f');
    expect(html).toContain('<span class="project">Acme &lt;b&gt;&amp;&lt;/b&gt; Co</span>');
    expect(html).not.toContain('<b>&</b>');
  }

  beforeAll(async () => {
    sink = await startSmtpSink();
    const dbPath = join(mkdtempSync(join(tmpdir(), 'mailroom-signup-pages-')), 'mailroom.db');
    mailroom = createMailroom({
      store: sqlStore({ url: dbPath }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      clock,
      signup: { baseUrl: () => base },
    });
    const app = express();
    app.use(mailroomRouter(mailroom));
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const created = await mailroom.admin.createProject({ name: PROJECT });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: SENDER });
    await mailroom.brand.update(secret, { color: '#0a7d4f', logo: LOGO });
    await mailroom.topics.create(secret, { key: 'news', name: 'News', default: 'opt-in', doubleOptIn: true });
    const form = await mailroom.forms.create(secret, {
      name: 'Footer form',
      topic: 'news',
      consentText: 'I agree',
      sender: SENDER,
    });
    formRef = form.ref;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await mailroom.close();
    await sink.close();
  });

  it("a link's pages carry the project's brand, in English by default", async () => {
    const link = await signup('ann@example.test');
    const confirm = await page(link);
    expect(confirm.status).toBe(200);
    expectBranded(confirm.html);
    expect(confirm.html).toContain('<html lang="en">');
    expect(confirm.html).toContain('<button type="submit">Confirm my subscription</button>');
    expect(confirm.html).toContain('<title>Confirm your subscription · Acme &lt;b&gt;');

    const done = await page(link, { method: 'POST' });
    expect(done.status).toBe(200);
    expectBranded(done.html);
    expect(done.html).toContain('<h1>Subscription confirmed</h1>');
    expect(done.html).toContain('role="status"');
  });

  it("the contact's locale trait picks the language: French confirm, expired and sent pages", async () => {
    await signup('zoe@example.test');
    await mailroom.audience.updateProfile(secret, 'zoe@example.test', { traits: { locale: 'fr-CH' } });
    const link = await signup('zoe@example.test');
    const confirm = await page(link);
    expect(confirm.html).toContain('<html lang="fr">');
    expect(confirm.html).toContain('<button type="submit">Confirmer mon abonnement</button>');
    expectBranded(confirm.html);

    // Past the link's 7 days: the expired page, in French, with its "send a new link" button.
    clock.advance(8 * DAY);
    const expired = await page(link);
    expect(expired.status).toBe(410);
    expectBranded(expired.html);
    expect(expired.html).toContain('<h1>Ce lien a expiré</h1>');
    expect(expired.html).toContain('/resend"><button type="submit">Envoyer un nouveau lien</button>');

    const sent = await page(`${link}/resend`, { method: 'POST' });
    expect(sent.status).toBe(200);
    expectBranded(sent.html);
    expect(sent.html).toContain('<h1>Consultez votre boîte de réception</h1>');
    expect(sent.html).toContain('<strong>z***@example.test</strong>');
  });

  it("German for a German contact; the browser's language where the contact is not looked up", async () => {
    await signup('max@example.test');
    await mailroom.audience.updateProfile(secret, 'max@example.test', { traits: { locale: 'de' } });
    const link = await signup('max@example.test');
    const confirm = await page(link);
    expect(confirm.html).toContain('<html lang="de">');
    expect(confirm.html).toContain('<button type="submit">Anmeldung bestätigen</button>');

    // The thanks page of a plain form post reads the same for every address: the browser's language.
    const thanks = await page(`${base}/subscribe/${formRef}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'accept-language': 'de-DE,de;q=0.9,en;q=0.5',
      },
      body: new URLSearchParams({ email: 'new@example.test' }).toString(),
    });
    await mailroom.signups.settled();
    expect(thanks.status).toBe(200);
    expectBranded(thanks.html);
    expect(thanks.html).toContain('<h1>Vielen Dank</h1>');

    // A forged link: no project to show, the browser's language.
    const forged = await page(`${base}/confirm/not-a-token`, { headers: { 'accept-language': 'fr' } });
    expect(forged.status).toBe(404);
    expect(forged.html).toContain('<html lang="fr">');
    expect(forged.html).toContain('Ce lien de confirmation n’est pas valide.');
  });
});
