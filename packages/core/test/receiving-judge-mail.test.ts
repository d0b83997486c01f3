import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { authenticate, dkimSign } from 'mailauth';
import { describe, expect, it } from 'vitest';
import type { DnsResolver } from '../src/domains/dns-lookup.js';
import { mailauthResolver } from '../src/domains/dns-lookup.js';
import { cachedResolver } from '../src/receiving/dns-cache.js';
import { judgeMail } from '../src/receiving/judge-mail.js';
import { judgedBytes } from '../src/receiving/parse-received.js';
import type { ReceivingEnvelope } from '../src/receiving/receiving-types.js';
import { cachedSpf, type SpfQuestion } from '../src/receiving/spf-cache.js';

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicKey = keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const privateKey = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** A zone in a map: TXT records; any other name or type answers node's "not there" codes. */
function zone(records: Record<string, string[]>): DnsResolver & { asked: number } {
  const resolver = {
    asked: 0,
    async resolve(name: string, rrtype: string) {
      resolver.asked++;
      const found = rrtype === 'TXT' ? records[name.toLowerCase()] : undefined;
      if (!found) throw Object.assign(new Error(`no ${rrtype} at ${name}`), { code: 'ENOTFOUND' });
      return found.map((text) => [text]);
    },
  };
  return resolver;
}

const records = {
  'sender.test': ['v=spf1 ip4:127.0.0.0/8 -all'],
  '_dmarc.sender.test': ['v=DMARC1; p=reject'],
  'sel._domainkey.sender.test': [`v=DKIM1; k=rsa; p=${publicKey}`],
  'soft.test': ['v=spf1 ~all'],
};

/** What the receiver gave before the split: mailauth's `authenticate`, read as `parse-received.ts` read it. */
async function authenticated(bytes: Buffer, envelope: ReceivingEnvelope, resolver: DnsResolver) {
  const result = await authenticate(bytes, {
    ip: envelope.remoteAddress,
    helo: envelope.helo ?? envelope.remoteAddress,
    sender: envelope.envelopeFrom,
    mta: 'mx.in.test',
    disableBimi: true,
    resolver: mailauthResolver(resolver).resolve,
  });
  const dkim = result.dkim?.results ?? [];
  return {
    spf: result.spf === false ? 'none' : (result.spf?.status?.result ?? 'none'),
    dkim: dkim.find((r) => r.status?.result === 'pass')?.status?.result ?? dkim[0]?.status?.result ?? 'none',
    dmarc: result.dmarc === false ? 'none' : (result.dmarc?.status?.result ?? 'none'),
    arc: result.arc === false ? 'none' : (result.arc?.status?.result ?? 'none'),
    header: result.headers.trim(),
  };
}

function fixtures(): Buffer[] {
  const out: Buffer[] = [];
  for (const dir of ['everyday', 'inbound']) {
    const at = new URL(`./fixtures/${dir}/`, import.meta.url);
    for (const name of readdirSync(at).sort()) {
      if (name.endsWith('.eml')) out.push(readFileSync(new URL(name, at)));
    }
  }
  return out;
}

describe('judgeMail: mailauth in its parts, the SPF verdict kept', () => {
  it('gives what authenticate gives, on the fixtures and a signed message, first and from the cache', async () => {
    const message = Buffer.from(
      'From: Ana <ana@sender.test>\r\nTo: support@in.test\r\nSubject: Hi\r\nDate: Mon, 30 Nov 2026 00:00:00 +0000\r\nMessage-ID: <a@sender.test>\r\n\r\nHello\r\n',
    );
    // mailauth's runtime reads `signatureData` (its type names the fields at the top level).
    const signed = await dkimSign(message, {
      signatureData: [{ signingDomain: 'sender.test', selector: 'sel', privateKey }],
    } as never);
    const messages = [...fixtures(), message, Buffer.concat([Buffer.from(signed.signatures), message])];
    expect(messages.length).toBeGreaterThan(20);
    const envelopes: ReceivingEnvelope[] = [
      {
        remoteAddress: '127.0.0.2',
        helo: 'mx.sender.test',
        envelopeFrom: 'ana@sender.test',
        envelopeTo: ['support@in.test'],
      },
      {
        remoteAddress: '192.0.2.1',
        helo: 'mx.sender.test',
        envelopeFrom: 'ana@sender.test',
        envelopeTo: ['support@in.test'],
      },
      { remoteAddress: '192.0.2.1', envelopeFrom: 'bob@soft.test', envelopeTo: ['support@in.test'] },
      {
        remoteAddress: '127.0.0.2',
        helo: 'x',
        envelopeFrom: 'eve@nowhere.test',
        envelopeTo: ['support@in.test'],
      },
    ];
    const seen = new Set<string>();
    const resolver = cachedResolver(zone(records));
    for (const bytes of messages) {
      for (const envelope of envelopes) {
        const judged = judgedBytes(bytes);
        const expected = await authenticated(judged, envelope, zone(records));
        seen.add(`${expected.spf} ${expected.dkim} ${expected.dmarc}`);
        // The first message of an envelope is checked, the next ones come from the kept verdict.
        expect(await judgeMail(judged, envelope, { resolver, authServId: 'mx.in.test' })).toEqual(expected);
      }
    }
    // The cases are not all alike: pass, fail, softfail and none; DKIM pass; DMARC pass and fail.
    expect([...seen]).toEqual(
      expect.arrayContaining([
        'pass pass pass',
        'fail pass pass',
        'fail none fail',
        'softfail none none',
        'none none none',
      ]),
    );
  });

  it('keeps a verdict per whole question, not a temperror, not past its time, and a bounded number', async () => {
    let t = 0;
    const asked: SpfQuestion[] = [];
    let result = 'pass';
    const check = cachedSpf(
      async (question) => {
        asked.push(question);
        return { status: { result } } as never;
      },
      { ms: 10_000, now: () => t },
    );
    const q = { ip: '192.0.2.1', sender: 'ana@sender.test', helo: 'mx', mta: 'mx.in.test' };
    await check(q);
    await check({ ...q, sender: 'ANA@Sender.test' });
    expect(asked).toHaveLength(1);
    // The local part may be read by a macro (%{l}), the IP and HELO by the mechanisms.
    await check({ ...q, sender: 'bob@sender.test' });
    await check({ ...q, ip: '192.0.2.2' });
    await check({ ...q, helo: 'other' });
    expect(asked).toHaveLength(4);
    t = 10_001;
    result = 'fail';
    expect((await check(q)).status.result).toBe('fail');
    expect(asked).toHaveLength(5);
    result = 'temperror';
    const again = { ...q, ip: '198.51.100.1' };
    await check(again);
    await check(again);
    expect(asked).toHaveLength(7);
    for (let i = 0; i < 1_001; i++) await check({ ...q, ip: `10.0.${i >> 8}.${i & 255}` });
    const before = asked.length;
    await check({ ...q, ip: '10.0.0.0' }); // the oldest: gone
    expect(asked).toHaveLength(before + 1);
  });

  it('does not keep verdicts judged through an app resolver (its answers are not kept either)', async () => {
    const app = zone(records);
    const envelope = {
      remoteAddress: '127.0.0.2',
      helo: 'mx.sender.test',
      envelopeFrom: 'ana@sender.test',
      envelopeTo: ['support@in.test'],
    };
    const header = Buffer.from('From: ana@sender.test\r\n\r\n');
    expect((await judgeMail(header, envelope, { resolver: app, authServId: 'mx' })).spf).toBe('pass');
    app.resolve = async () => {
      throw Object.assign(new Error('gone'), { code: 'ENOTFOUND' });
    };
    expect((await judgeMail(header, envelope, { resolver: app, authServId: 'mx' })).spf).toBe('none');
  });
});
