/**
 * The domain check against a real DNS server on loopback (dns2) serving the zone each test writes: what a
 * domain's owner published, right or broken in one named way.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type DnsZoneServer,
  publish,
  startDnsZone,
  startSilentDns,
  type Zone,
} from '../../../test/support/dns-zone.js';
import { type DkimKeyPair, generateDkimKey } from '../src/domains/dkim-key.js';
import { checkDomain, type DomainCheckOptions } from '../src/domains/domain-check.js';
import type { DomainFinding } from '../src/domains/domain-finding.js';
import { domainRecords } from '../src/domains/domain-records.js';

const DOMAIN = 'acme.example';
const SELECTOR = 'mr20260829';
const RELAY = '198.51.100.7';
const RETURN_PATH = { domain: `bounces.${DOMAIN}`, mx: `inbound.${DOMAIN}` };

let dns: DnsZoneServer;
let key: DkimKeyPair;
let otherKey: DkimKeyPair;

beforeAll(async () => {
  [key, otherKey] = await Promise.all([generateDkimKey('rsa'), generateDkimKey('rsa')]);
  dns = await startDnsZone({});
});
afterAll(() => dns.close());

/** The zone of a domain whose owner published every advised record. */
function publishedZone(options: { returnPath?: boolean } = {}): Zone {
  return publish(
    {},
    domainRecords({
      domain: DOMAIN,
      dkim: [{ selector: SELECTOR, ...key }],
      relay: { addresses: [RELAY] },
      ...(options.returnPath ? { returnPath: RETURN_PATH } : {}),
    }),
  );
}

function check(options: Partial<DomainCheckOptions> = {}) {
  return checkDomain({
    domain: DOMAIN,
    dkim: { selector: SELECTOR, ...key },
    relay: { addresses: [RELAY] },
    resolver: dns.resolver(),
    ...options,
  });
}

function findingOf(findings: readonly DomainFinding[], kind: DomainFinding['kind']): DomainFinding {
  const found = findings.find((item) => item.kind === kind);
  if (!found) throw new Error(`no ${kind} finding`);
  return found;
}

describe('a domain that published every advised record', () => {
  it('is verified: DKIM verifies a signed probe, SPF passes for the relay, DMARC passes, the MX is there', async () => {
    dns.zone = publishedZone({ returnPath: true });
    const result = await check({ returnPath: RETURN_PATH });
    expect(result.state, JSON.stringify(result.findings, null, 1)).toBe('verified');
    expect(result.findings.map((item) => [item.kind, item.name, item.state])).toEqual([
      ['dkim', `${SELECTOR}._domainkey.${DOMAIN}`, 'found'],
      ['spf', DOMAIN, 'found'],
      ['dmarc', `_dmarc.${DOMAIN}`, 'found'],
      ['return-path-mx', `bounces.${DOMAIN}`, 'found'],
      ['return-path-spf', `bounces.${DOMAIN}`, 'found'],
    ]);
    // A 2048-bit key does not fit in one 255-byte string: it was served split and joined again.
    expect(findingOf(result.findings, 'dkim').actual).toEqual([`v=DKIM1; k=rsa; p=${key.publicKey}`]);
    expect(dns.queries).toContain(`${SELECTOR}._domainkey.${DOMAIN} TXT`);
  });

  it('is verified with an Ed25519 key (RFC 8463)', async () => {
    const ed = await generateDkimKey('ed25519');
    dns.zone = publish(
      {},
      domainRecords({
        domain: DOMAIN,
        dkim: [{ selector: 'mr20260829e', ...ed }],
        relay: { addresses: [RELAY] },
      }),
    );
    const result = await check({ dkim: { selector: 'mr20260829e', ...ed } });
    expect(findingOf(result.findings, 'dkim')).toMatchObject({
      state: 'found',
      actual: [`v=DKIM1; k=ed25519; p=${ed.publicKey}`],
    });
    expect(result.state, JSON.stringify(result.findings, null, 1)).toBe('verified');
  });

  it('normalises the domain it is given', async () => {
    dns.zone = publishedZone();
    const result = await check({ domain: 'ACME.example.' });
    expect(result).toMatchObject({ domain: DOMAIN, state: 'verified' });
  });
});

describe('SPF', () => {
  beforeEach(() => {
    dns.zone = publishedZone();
  });

  it('wrong when it fails for the relay, with the record to publish instead', async () => {
    dns.zone[DOMAIN] = { TXT: ['v=spf1 ip4:203.0.113.9 -all'] };
    const result = await check();
    expect(result.state).toBe('failed');
    expect(findingOf(result.findings, 'spf')).toMatchObject({
      state: 'wrong',
      expected: `v=spf1 ip4:203.0.113.9 ip4:${RELAY} -all`,
      actual: ['v=spf1 ip4:203.0.113.9 -all'],
      problem: expect.stringMatching(new RegExp(`gives ${RELAY.replaceAll('.', '\\.')} "fail.*not pass`)),
    });
  });

  it('wrong on a permanent error (a broken mechanism)', async () => {
    dns.zone[DOMAIN] = { TXT: [`v=spf1 ip4:${RELAY} ip4:not-an-address ~all`] };
    const spf = findingOf((await check()).findings, 'spf');
    expect(spf).toMatchObject({ state: 'wrong', problem: expect.stringMatching(/has an error: permerror/) });
  });

  it('wrong when two SPF records are published', async () => {
    dns.zone[DOMAIN] = {
      TXT: [`v=spf1 ip4:${RELAY} ~all`, 'v=spf1 mx ~all', 'google-site-verification=abc'],
    };
    const spf = findingOf((await check()).findings, 'spf');
    expect(spf).toMatchObject({
      state: 'wrong',
      problem: expect.stringMatching(/^2 SPF records at acme\.example: .*\(permerror\)/),
    });
  });

  it('missing when the domain has no SPF record, with the record to publish', async () => {
    dns.zone[DOMAIN] = { TXT: ['google-site-verification=abc'] };
    const spf = findingOf((await check()).findings, 'spf');
    expect(spf).toMatchObject({ state: 'missing', expected: `v=spf1 ip4:${RELAY} ~all` });
  });

  it('without relay addresses: a record that lets anyone send is wrong, any other is found', async () => {
    dns.zone[DOMAIN] = { TXT: ['v=spf1 +all'] };
    const open = findingOf((await check({ relay: undefined })).findings, 'spf');
    expect(open).toMatchObject({ state: 'wrong', problem: expect.stringMatching(/lets any address send/) });
    dns.zone[DOMAIN] = { TXT: ['v=spf1 mx ~all'] };
    const some = findingOf((await check({ relay: undefined })).findings, 'spf');
    expect(some).toMatchObject({ state: 'found', expected: 'v=spf1 mx ~all' });
  });

  it('with the relay known by mechanism only: the record must name it', async () => {
    dns.zone[DOMAIN] = { TXT: ['v=spf1 mx ~all'] };
    const relay = { mechanisms: ['include:relay.example'] };
    const spf = findingOf((await check({ relay })).findings, 'spf');
    expect(spf).toMatchObject({ state: 'wrong', expected: 'v=spf1 mx include:relay.example ~all' });
  });

  it('passes through an include when the included record names the relay', async () => {
    dns.zone[DOMAIN] = { TXT: ['v=spf1 include:_spf.relay.example ~all'] };
    dns.zone['_spf.relay.example'] = { TXT: [`v=spf1 ip4:${RELAY} -all`] };
    expect(findingOf((await check()).findings, 'spf').state).toBe('found');
  });
});

describe('DKIM', () => {
  beforeEach(() => {
    dns.zone = publishedZone();
  });

  it('missing when no key is published at the selector, with the exact record', async () => {
    delete dns.zone[`${SELECTOR}._domainkey.${DOMAIN}`];
    const result = await check();
    expect(findingOf(result.findings, 'dkim')).toMatchObject({
      state: 'missing',
      expected: `v=DKIM1; k=rsa; p=${key.publicKey}`,
      problem: `No DKIM key is published at ${SELECTOR}._domainkey.${DOMAIN}`,
    });
    expect(result.state).toBe('failed');
  });

  it('wrong when another key is published', async () => {
    dns.zone[`${SELECTOR}._domainkey.${DOMAIN}`] = { TXT: [`v=DKIM1; k=rsa; p=${otherKey.publicKey}`] };
    expect(findingOf((await check()).findings, 'dkim')).toMatchObject({
      state: 'wrong',
      expected: `v=DKIM1; k=rsa; p=${key.publicKey}`,
      problem: expect.stringMatching(/another key/),
    });
  });

  it('wrong when a message signed with the private key does not verify (checked by mailauth)', async () => {
    dns.zone[`${SELECTOR}._domainkey.${DOMAIN}`] = { TXT: [`v=DKIM1; k=rsa; p=${otherKey.publicKey}`] };
    const dkim = findingOf(
      (await check({ dkim: { selector: SELECTOR, privateKey: key.privateKey } })).findings,
      'dkim',
    );
    expect(dkim).toMatchObject({
      state: 'wrong',
      problem: expect.stringMatching(/does not verify: fail \(bad signature\)/),
    });
  });

  // mailauth reads the clock twice when it signs, once for the header it signs and once for the header it
  // writes (`t=`, rounded to the second): without one sign time given, a probe that straddles a half second
  // (a loaded machine) carried a `t=` other than the one signed, and a good key read as "bad signature".
  it('found when the clock turns a second while the probe is signed', async () => {
    dns.zone = publishedZone();
    const start = Math.floor(Date.now() / 1000) * 1000 + 400;
    let calls = 0;
    const now = vi.spyOn(Date, 'now').mockImplementation(() => start + 200 * calls++);
    try {
      expect(findingOf((await check()).findings, 'dkim')).toMatchObject({ state: 'found' });
    } finally {
      now.mockRestore();
    }
    expect(calls).toBeGreaterThan(1);
  });

  it('wrong when the key is revoked (empty p=)', async () => {
    dns.zone[`${SELECTOR}._domainkey.${DOMAIN}`] = { TXT: ['v=DKIM1; k=rsa; p='] };
    expect(findingOf((await check()).findings, 'dkim')).toMatchObject({
      state: 'wrong',
      problem: expect.stringMatching(/revoked/),
    });
  });

  it('a selector-only preflight finds any usable key', async () => {
    const dkim = findingOf((await check({ dkim: { selector: SELECTOR } })).findings, 'dkim');
    expect(dkim).toMatchObject({ state: 'found' });
    expect(dkim.expected).toBeUndefined();
  });

  it('checks every key of a rotation', async () => {
    const next = await generateDkimKey('rsa');
    publish(
      dns.zone,
      domainRecords({ domain: DOMAIN, dkim: [{ selector: 'mr20261001', ...next }] }).slice(0, 1),
    );
    const result = await check({
      dkim: [
        { selector: SELECTOR, ...key },
        { selector: 'mr20261001', ...next },
        { selector: 'mr20261101', ...otherKey },
      ],
    });
    expect(
      result.findings.filter((item) => item.kind === 'dkim').map((item) => [item.name, item.state]),
    ).toEqual([
      [`${SELECTOR}._domainkey.${DOMAIN}`, 'found'],
      [`mr20261001._domainkey.${DOMAIN}`, 'found'],
      [`mr20261101._domainkey.${DOMAIN}`, 'missing'],
    ]);
  });
});

describe('DMARC', () => {
  beforeEach(() => {
    dns.zone = publishedZone({ returnPath: true });
  });

  it('missing when no record is published, with the p=none record to start with', async () => {
    delete dns.zone[`_dmarc.${DOMAIN}`];
    const result = await check({ returnPath: RETURN_PATH });
    expect(findingOf(result.findings, 'dmarc')).toMatchObject({
      state: 'missing',
      expected: `v=DMARC1; p=none; rua=mailto:dmarc@${DOMAIN}`,
    });
    expect(result.state).toBe('failed');
  });

  it('wrong (misaligned) when DKIM fails and the return path is another organisation', async () => {
    delete dns.zone[`${SELECTOR}._domainkey.${DOMAIN}`];
    const returnPath = { domain: 'bounces.mailer.example' };
    publish(dns.zone, [{ type: 'TXT', name: returnPath.domain, value: `v=spf1 ip4:${RELAY} ~all` }]);
    const result = await check({ returnPath });
    expect(findingOf(result.findings, 'return-path-spf').state).toBe('found');
    expect(findingOf(result.findings, 'dmarc')).toMatchObject({
      state: 'wrong',
      problem: `Mail from ${DOMAIN} fails DMARC: DKIM does not pass, and the return path bounces.mailer.example is not aligned with ${DOMAIN}`,
    });
  });

  it('a return path under the domain aligns in relaxed mode, not under aspf=s', async () => {
    delete dns.zone[`${SELECTOR}._domainkey.${DOMAIN}`];
    const relaxed = await check({ returnPath: RETURN_PATH });
    expect(findingOf(relaxed.findings, 'dmarc').state).toBe('found');
    dns.zone[`_dmarc.${DOMAIN}`] = { TXT: ['v=DMARC1; p=none; aspf=s'] };
    const strict = await check({ returnPath: RETURN_PATH });
    expect(findingOf(strict.findings, 'dmarc')).toMatchObject({
      state: 'wrong',
      problem: expect.stringMatching(
        /return path bounces\.acme\.example is not aligned with acme\.example \(aspf=s\)/,
      ),
    });
  });

  it('wrong without a valid policy', async () => {
    dns.zone[`_dmarc.${DOMAIN}`] = { TXT: ['v=DMARC1; p=monitor'] };
    expect(findingOf((await check()).findings, 'dmarc')).toMatchObject({
      state: 'wrong',
      problem: expect.stringMatching(/no valid p= policy/),
    });
  });

  it("a subdomain is covered by its organisation's record", async () => {
    const sub = `news.${DOMAIN}`;
    publish(
      dns.zone,
      domainRecords({
        domain: sub,
        dkim: [{ selector: SELECTOR, ...key }],
        relay: { addresses: [RELAY] },
      }).slice(0, 2),
    );
    const result = await check({ domain: sub });
    expect(findingOf(result.findings, 'dmarc')).toMatchObject({
      state: 'found',
      name: `_dmarc.${sub}`,
      actual: [`v=DMARC1; p=none; rua=mailto:dmarc@${DOMAIN}`],
    });
    expect(result.state, JSON.stringify(result.findings, null, 1)).toBe('verified');
  });

  it('checks the report authorisation of another domain as optional', async () => {
    const result = await check({ dmarcReports: 'reports@dmarc.example' });
    expect(findingOf(result.findings, 'dmarc-report-auth')).toMatchObject({
      state: 'missing',
      optional: true,
      name: `${DOMAIN}._report._dmarc.dmarc.example`,
    });
    expect(result.state, JSON.stringify(result.findings, null, 1)).toBe('verified');
  });
});

describe('return path', () => {
  beforeEach(() => {
    dns.zone = publishedZone({ returnPath: true });
  });

  it('MX missing, or naming another host than the inbound server', async () => {
    delete dns.zone[RETURN_PATH.domain]?.MX;
    expect(findingOf((await check({ returnPath: RETURN_PATH })).findings, 'return-path-mx')).toMatchObject({
      state: 'missing',
      expected: RETURN_PATH.mx,
    });
    publish(dns.zone, [{ type: 'MX', name: RETURN_PATH.domain, value: 'mx.elsewhere.example', priority: 5 }]);
    expect(findingOf((await check({ returnPath: RETURN_PATH })).findings, 'return-path-mx')).toMatchObject({
      state: 'wrong',
      actual: ['5 mx.elsewhere.example'],
    });
  });
});

describe('BIMI (optional)', () => {
  beforeEach(() => {
    dns.zone = publishedZone();
    dns.zone[`default._bimi.${DOMAIN}`] = { TXT: ['v=BIMI1; l=https://acme.example/logo.svg; a='] };
  });

  it('found but not shown while DMARC is p=none', async () => {
    const result = await check({ bimi: true });
    expect(findingOf(result.findings, 'bimi')).toMatchObject({
      state: 'found',
      optional: true,
      actual: ['v=BIMI1; l=https://acme.example/logo.svg; a='],
      problem: expect.stringMatching(/too lax DMARC policy/),
    });
  });

  it('found and usable under p=reject; missing does not fail the domain', async () => {
    dns.zone[`_dmarc.${DOMAIN}`] = { TXT: ['v=DMARC1; p=reject'] };
    const shown = findingOf((await check({ bimi: true })).findings, 'bimi');
    expect(shown.state).toBe('found');
    expect(shown.problem).toBeUndefined();
    delete dns.zone[`default._bimi.${DOMAIN}`];
    const result = await check({ bimi: true });
    expect(findingOf(result.findings, 'bimi').state).toBe('missing');
    expect(result.state, JSON.stringify(result.findings, null, 1)).toBe('verified');
  });
});

describe('a DNS server that does not answer', () => {
  it('gives "no answer" for every record, never "verified"', async () => {
    const silent = await startSilentDns();
    try {
      const result = await check({ resolver: silent.resolver(), returnPath: RETURN_PATH, bimi: true });
      expect(result.state).toBe('no-answer');
      for (const item of result.findings) {
        expect(item.state, item.kind).toBe('no-answer');
        expect(item.problem).toMatch(/^No answer from DNS for .* \(ETIMEOUT\): not verified$/);
      }
    } finally {
      await silent.close();
    }
  });

  it('one name failing (SERVFAIL) keeps the domain unverified', async () => {
    dns.zone = publishedZone();
    dns.zone[`${SELECTOR}._domainkey.${DOMAIN}`] = { servfail: true };
    const result = await check();
    expect(findingOf(result.findings, 'dkim')).toMatchObject({
      state: 'no-answer',
      problem: expect.stringMatching(/ESERVFAIL/),
    });
    expect(result.state).toBe('no-answer');
  });

  it('an SPF include that fails is "no answer", not pass', async () => {
    dns.zone = publishedZone();
    dns.zone[DOMAIN] = { TXT: [`v=spf1 include:_spf.broken.example ip4:${RELAY} ~all`] };
    dns.zone['_spf.broken.example'] = { servfail: true };
    const result = await check();
    expect(findingOf(result.findings, 'spf')).toMatchObject({
      state: 'no-answer',
      problem: `No answer from DNS for ${DOMAIN} (_spf.broken.example TXT: ESERVFAIL): not verified`,
    });
    expect(result.state).toBe('no-answer');
  });
});

describe('bad input', () => {
  it('refuses an IP, a name without a dot and a check without a DKIM key', async () => {
    await expect(check({ domain: '192.0.2.1' })).rejects.toThrow(/is an IP address/);
    await expect(check({ domain: 'localhost' })).rejects.toThrow(/has no dot/);
    await expect(check({ dkim: [] })).rejects.toThrow(/at least one DKIM key/);
    await expect(check({ dkim: { selector: 'bad_selector' } })).rejects.toThrow(/not made of DNS labels/);
  });
});
