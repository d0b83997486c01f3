import type { AddressInfo } from 'node:net';
import { createMailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { inboundFixture } from '../packages/core/test/inbound-fixtures.js';
import { dashboardCookie } from './support/dashboard-session.js';

/** The dashboard shows a bounced delivery's diagnostic (real Fastify server on 127.0.0.1). */
it('shows bounced counts, bounces by destination and reason, and the bounce diagnostic', async () => {
  const transport = memoryTransport();
  const mailroom = createMailroom({
    store: memoryStore(),
    transport,
    bounces: { domain: 'bounces.acme.test' },
  });
  const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
  await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
  const { ref } = await mailroom.broadcast(secret, {
    subject: 'News',
    sender: 'news@acme.test',
    message: 'Hi',
    recipients: ['ann@example.org', 'bob@example.org', 'cat@gmail.test', 'dan@gmail.test'],
  });
  await mailroom.worker.drain();
  const sent = transport.lastMessageTo('ann@example.org');
  const raw = inboundFixture('dsn-postfix-hard', {
    returnPath: sent?.envelopeFrom ?? '',
    recipient: 'ann@example.org',
    messageId: sent?.messageId ?? '',
  });
  await mailroom.inbound.receive(raw, { envelopeTo: [sent?.envelopeFrom ?? ''] });
  // Gmail refuses the sender's domain (DMARC) for two of them: sender-side, nothing suppressed.
  for (const to of ['cat@gmail.test', 'dan@gmail.test']) {
    const m = transport.lastMessageTo(to);
    const dmarc = inboundFixture('dsn-dmarc', {
      returnPath: m?.envelopeFrom ?? '',
      recipient: to,
      messageId: m?.messageId ?? '',
    });
    expect((await mailroom.inbound.receive(dmarc, { envelopeTo: [m?.envelopeFrom ?? ''] })).outcome).toBe(
      'applied',
    );
  }
  expect(await mailroom.store.findSuppressed(project.id, ['cat@gmail.test', 'dan@gmail.test'])).toEqual([]);
  const app = Fastify();
  await app.register(mailroomPlugin, { mailroom });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const cookie = await dashboardCookie(base, secret);
    const get = async (path: string) => (await fetch(base + path, { headers: { cookie } })).text();
    const mailingPage = await get(`/dashboard/broadcasts/${ref}`);
    expect(mailingPage).toMatch(/bounced[^0-9]*3/);
    // Bounces by destination: Gmail refused the sender twice, example.org has one unknown user.
    expect(mailingPage).toContain('<h2>Bounces by destination</h2>');
    expect(mailingPage).toMatch(
      /<tr data-domain="gmail\.test">.*?data-sender-side>2<.*?data-recipient-hard>0<.*?data-soft>0<.*?data-reason="authfailure" data-class="sender-side"><code title="SPF, DKIM or DMARC[^"]*">authfailure<\/code> 2/,
    );
    expect(mailingPage).toMatch(
      /<tr data-domain="example\.org">.*?data-sender-side>0<.*?data-recipient-hard>1</,
    );
    expect(mailingPage.indexOf('data-domain="gmail.test"')).toBeLessThan(
      mailingPage.indexOf('data-domain="example.org"'),
    );
    const broadcastsPage = await get('/dashboard/broadcasts');
    expect(broadcastsPage).toMatch(/<tr data-domain="gmail\.test">.*?data-sender-side>2</);
    expect(mailingPage).toContain('User unknown in virtual mailbox table');
    const deliveryPage = await get(`/dashboard/broadcasts/${ref}/delivery?address=ann%40example.org`);
    expect(deliveryPage).toContain('<dt>Diagnostic</dt>');
    expect(deliveryPage).toContain('hard bounce (userunknown): 5.1.1 smtp; 550 5.1.1');
    expect(deliveryPage).toContain('badge bounced');
    expect(deliveryPage).toContain('<h2>Bounces and complaints</h2>');
    expect(deliveryPage).toMatch(
      /<td data-label="Kind">hard-bounce<\/td><td data-label="Reason"><code title="[^"]+">userunknown<\/code><\/td><td data-label="Source">dsn<\/td><td data-label="Status" class="mono">5\.1\.1<\/td>/,
    );
  } finally {
    await app.close();
    await mailroom.close();
  }
});
