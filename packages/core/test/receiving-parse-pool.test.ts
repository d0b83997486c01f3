import { threadId } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { DnsResolver } from '../src/domains/dns-lookup.js';
import { cachedResolver } from '../src/receiving/dns-cache.js';
import { createParsePool } from '../src/receiving/parse-pool.js';
import { parseReceived } from '../src/receiving/parse-received.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const RAW = new TextEncoder().encode(
  [
    'From: Ana <ana@sender.test>',
    'To: support@in.acme.test',
    'Subject: Re: your order',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Thanks!',
    '',
    'On Sun, Nov 29, 2026 at 9:00 AM Acme <help@acme.test> wrote:',
    '> Your order shipped.',
    '',
  ].join('\r\n'),
);
const ENVELOPE = {
  envelopeFrom: 'ana@sender.test',
  envelopeTo: ['support@in.acme.test'],
  remoteAddress: '127.0.0.1',
  helo: 'mx.sender.test',
};

/** A zone of one SPF record, counting the questions it is asked and on which thread. */
function zone(): DnsResolver & { asked: string[]; threads: Set<number> } {
  const asked: string[] = [];
  const threads = new Set<number>();
  return {
    asked,
    threads,
    async resolve(name, rrtype) {
      asked.push(`${rrtype} ${name}`);
      threads.add(threadId);
      if (rrtype === 'TXT' && name === 'sender.test') return [['v=spf1 ip4:127.0.0.1 -all']];
      throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    },
  };
}

describe('received messages read on a parse thread', () => {
  it('reads and judges as on the main thread, asking the app resolver on the main thread', async () => {
    const dns = zone();
    let here = 0;
    const pool = createParsePool({
      threads: 1,
      authServId: 'mx.acme.test',
      dns: { resolver: dns },
      here: (raw, envelope) => {
        here++;
        return parseReceived(raw, envelope, { resolver: dns, authServId: 'mx.acme.test' });
      },
      logger: silent,
    });
    try {
      await pool.warm();
      const [threaded, again] = await Promise.all([pool.parse(RAW, ENVELOPE), pool.parse(RAW, ENVELOPE)]);
      expect(here).toBe(0);
      const direct = await parseReceived(RAW, ENVELOPE, { resolver: dns, authServId: 'mx.acme.test' });
      // The header names this run's time only in its own words: the rest is the same.
      expect({ ...threaded, auth: { ...threaded.auth, header: '' } }).toEqual({
        ...direct,
        auth: { ...direct.auth, header: '' },
      });
      expect(again.subject).toBe('Re: your order');
      expect(threaded).toMatchObject({
        from: { address: 'ana@sender.test', name: 'Ana' },
        stripped_text: 'Thanks!',
        auth: { spf: 'pass', dmarc: 'none' },
      });
      // Every lookup, the thread's included, was answered here (a function cannot cross threads).
      expect([...dns.threads]).toEqual([threadId]);
      expect(dns.asked).toContain('TXT sender.test');
    } finally {
      await pool.close();
    }
    await expect(pool.parse(RAW, ENVELOPE)).rejects.toMatchObject({ code: 'INTERNAL', retryable: true });
  }, 60_000);

  it('reads on the main thread while no parse thread has loaded', async () => {
    const dns = zone();
    let here = 0;
    const pool = createParsePool({
      threads: 2,
      authServId: 'mx.acme.test',
      dns: { resolver: dns },
      here: (raw, envelope) => {
        here++;
        return parseReceived(raw, envelope, { resolver: dns, authServId: 'mx.acme.test' });
      },
      logger: silent,
    });
    try {
      // Asked at once: the threads are only starting (seconds from the sources).
      const parsed = await pool.parse(RAW, ENVELOPE);
      expect(parsed.subject).toBe('Re: your order');
      expect(here).toBe(1);
    } finally {
      await pool.close();
    }
  }, 60_000);
});

describe('the DNS answers of received mail, kept 30 s', () => {
  it('asks once per name and type within the time, again after; failures are not kept', async () => {
    let now = 0;
    const asked: string[] = [];
    let failing = false;
    const resolver = cachedResolver(
      {
        async resolve(name, rrtype) {
          asked.push(`${rrtype} ${name}`);
          if (failing) throw Object.assign(new Error('timeout'), { code: 'ETIMEOUT' });
          if (name === 'nobody.test') throw Object.assign(new Error('none'), { code: 'ENOTFOUND' });
          return [['v=spf1 -all']];
        },
      },
      { now: () => now },
    );
    await Promise.all([resolver.resolve('a.test', 'TXT'), resolver.resolve('A.TEST', 'TXT')]);
    await resolver.resolve('a.test', 'MX');
    await expect(resolver.resolve('nobody.test', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.resolve('nobody.test', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(asked).toEqual(['TXT a.test', 'MX a.test', 'TXT nobody.test']);
    now = 30_001;
    failing = true;
    await expect(resolver.resolve('a.test', 'TXT')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    failing = false;
    expect(await resolver.resolve('a.test', 'TXT')).toEqual([['v=spf1 -all']]);
    expect(asked.slice(3)).toEqual(['TXT a.test', 'TXT a.test']);
  });
});
