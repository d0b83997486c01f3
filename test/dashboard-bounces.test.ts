import type { AddressInfo } from 'node:net';
import { createMailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { inboundFixture } from '../packages/core/test/inbound-fixtures.js';
import { dashboardCookie } from './support/dashboard-session.js';

/** The dashboard shows a bounced delivery's diagnostic (real Fastify server on 127.0.0.1). */
it('shows bounced and complained counts and the bounce diagnostic', async () => {
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
    recipients: ['ann@example.org', 'bob@example.org'],
  });
  await mailroom.worker.drain();
  const sent = transport.lastMessageTo('ann@example.org');
  const raw = inboundFixture('dsn-postfix-hard', {
    returnPath: sent?.envelopeFrom ?? '',
    recipient: 'ann@example.org',
    messageId: sent?.messageId ?? '',
  });
  await mailroom.inbound.receive(raw, { envelopeTo: [sent?.envelopeFrom ?? ''] });
  const app = Fastify();
  await app.register(mailroomPlugin, { mailroom });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const cookie = await dashboardCookie(base, secret);
    const get = async (path: string) => (await fetch(base + path, { headers: { cookie } })).text();
    const mailingPage = await get(`/dashboard/broadcasts/${ref}`);
    expect(mailingPage).toMatch(/bounced[^0-9]*1/);
    expect(mailingPage).toContain('User unknown in virtual mailbox table');
    const deliveryPage = await get(`/dashboard/broadcasts/${ref}/delivery?address=ann%40example.org`);
    expect(deliveryPage).toContain('<dt>Diagnostic</dt>');
    expect(deliveryPage).toContain('hard bounce (userunknown): 5.1.1 smtp; 550 5.1.1');
    expect(deliveryPage).toContain('badge bounced');
    expect(deliveryPage).toContain('<h2>Bounces and complaints</h2>');
    expect(deliveryPage).toMatch(
      /<td data-label="Kind">hard-bounce<\/td><td data-label="Source">dsn<\/td><td data-label="Status" class="mono">5\.1\.1<\/td>/,
    );
  } finally {
    await app.close();
    await mailroom.close();
  }
});
