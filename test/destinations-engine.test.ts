import { createSocket } from 'node:dgram';
import {
  createDestinationResolver,
  createMailroom,
  type DestinationOptions,
  MailroomError,
  type WorkerOptions,
} from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import { afterEach, describe, expect, it } from 'vitest';
import { isDestinationSlowDown } from '../packages/core/src/delivery/destination-gate.js';
import { startDnsZone } from './support/dns-zone.js';
import { startThrottlingSink, type ThrottlingSink } from './support/throttling-sink.js';

const groupOf = (address: string) => (/@(gmail|googlemail)\.com$/i.test(address) ? 'google' : 'other');

describe('destinations: which group a recipient belongs to', () => {
  it('maps the big providers by domain, else the domain itself; groups can be replaced', async () => {
    const resolver = createDestinationResolver();
    const cases: Array<[string, string]> = [
      ['a@gmail.com', 'google'],
      ['a@GoogleMail.com', 'google'],
      ['a@hotmail.co.uk', 'microsoft'],
      ['a@live.fr', 'microsoft'],
      ['a@outlook.com', 'microsoft'],
      ['a@yahoo.co.jp', 'yahoo'],
      ['a@aol.com', 'yahoo'],
      ['a@me.com', 'apple'],
      ['a@Example.TEST', 'example.test'],
      ['a@notgmail.com', 'notgmail.com'],
    ];
    for (const [address, group] of cases) expect(await resolver.resolve(address), address).toBe(group);
    const own = createDestinationResolver({ groups: { google: ['gmail.com'], partners: ['partner.test'] } });
    expect(await own.resolve('a@googlemail.com')).toBe('googlemail.com');
    expect(await own.resolve('a@partner.test')).toBe('partners');
    expect(await createDestinationResolver({ defaultGroups: false }).resolve('a@gmail.com')).toBe(
      'gmail.com',
    );
  });

  it('by MX host through a DNS server on loopback, cached; no answer leaves the domain its own', async () => {
    const zone = await startDnsZone({
      'acme.test': {
        MX: [
          { exchange: 'alt1.aspmx.l.google.com', priority: 5 },
          { exchange: 'aspmx.l.google.com', priority: 1 },
        ],
      },
      'corp.test': { MX: [{ exchange: 'corp-test.mail.protection.outlook.com', priority: 0 }] },
      'own.test': { MX: [{ exchange: 'mx.own.test', priority: 10 }] },
      'broken.test': { servfail: true },
    });
    try {
      const resolver = createDestinationResolver({ mx: { servers: [zone.address], timeoutMs: 1_000 } });
      expect(await resolver.resolve('a@acme.test')).toBe('google');
      expect(await resolver.resolve('b@corp.test')).toBe('microsoft');
      expect(await resolver.resolve('c@own.test')).toBe('own.test');
      expect(await resolver.resolve('d@broken.test')).toBe('broken.test');
      expect(await resolver.resolve('e@nowhere.test')).toBe('nowhere.test');
      // Known providers are named by their domain, without a lookup.
      expect(await resolver.resolve('f@gmail.com')).toBe('google');
      const asked = zone.queries.length;
      expect(zone.queries).not.toContain('gmail.com MX');
      // Cached: concurrent and later resolves of a domain ask nothing more.
      await Promise.all([resolver.resolve('x@acme.test'), resolver.resolve('y@acme.test')]);
      expect(await resolver.resolve('z@own.test')).toBe('own.test');
      expect(zone.queries.length).toBe(asked);
      // Off, nothing is asked.
      expect(await createDestinationResolver().resolve('a@acme.test')).toBe('acme.test');
      expect(zone.queries.length).toBe(asked);
    } finally {
      await zone.close();
    }
  });

  it('a DNS server that never answers: the domain is its own destination once the timeout passes', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address();
      const resolver = createDestinationResolver({ mx: { servers: [`127.0.0.1:${port}`], timeoutMs: 300 } });
      expect(await resolver.resolve('a@silent.test')).toBe('silent.test');
    } finally {
      silent.close();
    }
  });

  it('reads 421, 450, 454 and 4.7.x as a destination asking to slow down, not 5xx or other 4xx', () => {
    const reply = (responseCode: number, response: string) =>
      new MailroomError('TRANSPORT_TRANSIENT', response, { responseCode, response });
    expect(isDestinationSlowDown(reply(421, '421 4.7.28 Our system has detected an unusual rate'))).toBe(
      true,
    );
    expect(isDestinationSlowDown(reply(450, '450 4.2.1 too much mail'))).toBe(true);
    expect(isDestinationSlowDown(reply(451, '451 4.7.0 Temporary deferral, too many messages'))).toBe(true);
    expect(isDestinationSlowDown(reply(451, '451 4.3.0 Local error'))).toBe(false);
    expect(isDestinationSlowDown(reply(550, '550 5.7.1 blocked'))).toBe(false);
    expect(isDestinationSlowDown(new Error('ECONNRESET'))).toBe(false);
  });
});

describe('destination limits in the delivery worker', () => {
  let sink: ThrottlingSink | undefined;
  afterEach(async () => {
    await sink?.close();
    sink = undefined;
  });

  async function run(
    recipients: string[],
    destinations: DestinationOptions,
    worker: WorkerOptions,
    throttle: { limit: number; windowMs: number },
  ) {
    sink = await startThrottlingSink({ destinationOf: groupOf, limits: { google: throttle } });
    const store = memoryStore();
    const mailroom = createMailroom({
      store,
      transport: smtpTransport({ host: '127.0.0.1', port: sink.port, maxConnections: 4 }),
      worker: { concurrency: 4, renderThreads: 0, ...worker },
      destinations,
    });
    const { project, secret } = await mailroom.admin.createProject({ name: 'Limits' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: '<p>Hello</p>',
      recipients: recipients.map((address) => ({ address })),
    });
    await mailroom.worker.drain({ retryWaitMs: 20_000 });
    const mailing = await store.getMailing(project.id, ref);
    const deliveries = await store.listDeliveries(mailing?.id as string, { limit: 1_000 });
    await mailroom.close();
    return { deliveries, sink: sink as ThrottlingSink };
  }

  it('a destination at its limit waits (not failed, no attempt counted); the others go meanwhile', async () => {
    const gmail = Array.from({ length: 12 }, (_, i) => `g${i}@gmail.com`);
    const others = Array.from({ length: 12 }, (_, i) => `o${i}@example.test`);
    const { deliveries, sink: s } = await run(
      gmail.flatMap((g, i) => [g, others[i] as string]),
      { limits: { google: { perSecond: 3 } } },
      {},
      { limit: 3, windowMs: 1_000 },
    );
    // The sink never had to refuse: no second of it held more than the limit.
    expect(s.arrivals.filter((a) => !a.accepted)).toEqual([]);
    expect(s.maxInWindow('google', 1_000)).toBeLessThanOrEqual(3);
    expect([...s.delivered].sort()).toEqual([...gmail, ...others].sort());
    expect(deliveries.map((d) => `${d.status}/${d.attempts}`)).toEqual(deliveries.map(() => 'sent/1'));
    // Every other recipient was at the sink before the limit let the second google window through.
    const google = s.arrivals.filter((a) => a.destination === 'google');
    const lastOther = Math.max(...s.arrivals.filter((a) => a.destination === 'other').map((a) => a.at));
    expect(lastOther).toBeLessThan((google[3] as { at: number }).at);
  }, 30_000);

  it('a 421 4.7.28 slows that destination only (back off, then probe back up), never the transport', async () => {
    const gmail = Array.from({ length: 10 }, (_, i) => `g${i}@gmail.com`);
    const others = Array.from({ length: 30 }, (_, i) => `o${i}@example.test`);
    const { deliveries, sink: s } = await run(
      [...gmail, ...others],
      { slowDownPauseMs: 300 },
      // Were the transport slowed, every send would wait 20 s.
      { throttlePauseMs: 20_000 },
      { limit: 3, windowMs: 1_000 },
    );
    expect(s.arrivals.some((a) => a.destination === 'google' && !a.accepted)).toBe(true);
    expect([...s.delivered].sort()).toEqual([...gmail, ...others].sort());
    const other = s.arrivals.filter((a) => a.destination === 'other');
    expect(other.every((a) => a.accepted)).toBe(true);
    const lastGoogle = Math.max(...s.arrivals.filter((a) => a.destination === 'google').map((a) => a.at));
    // The others went while google waited: all of them were at the sink before google's last message,
    // and none waited for a transport pause.
    expect(Math.max(...other.map((a) => a.at))).toBeLessThan(lastGoogle);
    expect(Math.max(...other.map((a) => a.at)) - (s.arrivals[0] as { at: number }).at).toBeLessThan(20_000);
    expect(deliveries.every((d) => d.status === 'sent')).toBe(true);
  }, 30_000);
});
