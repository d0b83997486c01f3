import { describe, expect, it } from 'vitest';
import { domainRecords, mergeSpf, spfMechanisms } from '../src/domains/domain-records.js';

const KEY = { selector: 'mr20260829', algorithm: 'rsa', publicKey: 'MIIBIjANBg' } as const;

describe('domainRecords', () => {
  it('lists DKIM, SPF advice and a p=none DMARC for a domain with no relay or bounces', () => {
    const records = domainRecords({ domain: 'acme.com', dkim: [KEY] });
    expect(records.map(({ kind, type, name, value }) => ({ kind, type, name, value }))).toEqual([
      {
        kind: 'dkim',
        type: 'TXT',
        name: 'mr20260829._domainkey.acme.com',
        value: 'v=DKIM1; k=rsa; p=MIIBIjANBg',
      },
      { kind: 'spf', type: 'TXT', name: 'acme.com', value: 'v=spf1 a mx ~all' },
      {
        kind: 'dmarc',
        type: 'TXT',
        name: '_dmarc.acme.com',
        value: 'v=DMARC1; p=none; rua=mailto:dmarc@acme.com',
      },
    ]);
    expect(records[1]?.note).toMatch(/relay is not known/);
  });

  it('writes the Ed25519 record of RFC 8463, and one record per key during a rotation', () => {
    const records = domainRecords({
      domain: 'acme.com',
      dkim: [
        KEY,
        {
          selector: 'mr20261001e',
          algorithm: 'ed25519',
          publicKey: '11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=',
        },
      ],
    });
    expect(
      records.filter((record) => record.kind === 'dkim').map((record) => [record.name, record.value]),
    ).toEqual([
      ['mr20260829._domainkey.acme.com', 'v=DKIM1; k=rsa; p=MIIBIjANBg'],
      [
        'mr20261001e._domainkey.acme.com',
        'v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=',
      ],
    ]);
  });

  it('names the relay in SPF and adds the return path MX and SPF when bounces are on', () => {
    const records = domainRecords({
      domain: 'acme.com',
      dkim: [KEY],
      relay: { mechanisms: ['include:amazonses.com'] },
      returnPath: { domain: 'Bounces.Acme.com', mx: 'inbound.acme.com.' },
    });
    expect(
      records
        .slice(1)
        .map(({ kind, type, name, value, priority }) => ({ kind, type, name, value, priority })),
    ).toEqual([
      {
        kind: 'spf',
        type: 'TXT',
        name: 'acme.com',
        value: 'v=spf1 include:amazonses.com ~all',
        priority: undefined,
      },
      {
        kind: 'dmarc',
        type: 'TXT',
        name: '_dmarc.acme.com',
        value: 'v=DMARC1; p=none; rua=mailto:dmarc@acme.com',
        priority: undefined,
      },
      {
        kind: 'return-path-mx',
        type: 'MX',
        name: 'bounces.acme.com',
        value: 'inbound.acme.com',
        priority: 10,
      },
      {
        kind: 'return-path-spf',
        type: 'TXT',
        name: 'bounces.acme.com',
        value: 'v=spf1 include:amazonses.com ~all',
        priority: undefined,
      },
    ]);
    expect(records.every((record) => record.kind === 'dmarc' || record.note === undefined)).toBe(true);
  });

  it('publishes the relay addresses when no mechanism is given', () => {
    const [, spf] = domainRecords({
      domain: 'acme.com',
      dkim: [KEY],
      relay: { addresses: ['203.0.113.7', '2001:db8::25'] },
    });
    expect(spf?.value).toBe('v=spf1 ip4:203.0.113.7 ip6:2001:db8::25 ~all');
  });

  it('asks the report domain to accept the reports when they go elsewhere (RFC 7489 7.1)', () => {
    const records = domainRecords({
      domain: 'acme.com',
      dkim: [KEY],
      dmarcReports: 'reports@dmarc.example.net',
    });
    expect(records.find((record) => record.kind === 'dmarc')?.value).toBe(
      'v=DMARC1; p=none; rua=mailto:reports@dmarc.example.net',
    );
    expect(records.find((record) => record.kind === 'dmarc-report-auth')).toMatchObject({
      type: 'TXT',
      name: 'acme.com._report._dmarc.dmarc.example.net',
      value: 'v=DMARC1',
    });
    const own = domainRecords({ domain: 'acme.com', dkim: [KEY], dmarcReports: 'dmarc@reports.acme.com' });
    expect(own.some((record) => record.kind === 'dmarc-report-auth')).toBe(false);
  });

  it('refuses a reporting address that is not one', () => {
    for (const reports of ['dmarc.acme.com', '@acme.com', 'a b@acme.com', 'x@y.com;ruf=mailto:z@w.com']) {
      expect(
        () => domainRecords({ domain: 'acme.com', dkim: [KEY], dmarcReports: reports }),
        reports,
      ).toThrow(/DMARC reporting address .* is not an address/);
    }
  });

  it('refuses a malformed relay', () => {
    expect(() => spfMechanisms({ addresses: ['smtp.example.net'] })).toThrow(/is not an IP address/);
    expect(() => spfMechanisms({ mechanisms: ['include:x ~all'] })).toThrow(/is not an SPF mechanism/);
    expect(() => spfMechanisms({ mechanisms: ['+all'] })).toThrow(/is not an SPF mechanism/);
  });
});

describe('mergeSpf', () => {
  it('adds the missing mechanisms before all, keeps what is there', () => {
    expect(mergeSpf('v=spf1 mx -all', ['include:amazonses.com'])).toBe(
      'v=spf1 mx include:amazonses.com -all',
    );
    expect(mergeSpf('v=spf1 include:amazonses.com ~all', ['include:amazonses.com'])).toBe(
      'v=spf1 include:amazonses.com ~all',
    );
    expect(mergeSpf('v=spf1 a redirect=_spf.acme.com', ['ip4:203.0.113.7'])).toBe(
      'v=spf1 a ip4:203.0.113.7 redirect=_spf.acme.com',
    );
    expect(mergeSpf('v=spf1  +mx', ['mx', 'a'])).toBe('v=spf1 +mx a');
  });
});
