/**
 * Sender domains end to end: a key made for the domain, sealed and opened again as the store would keep it,
 * its records published in a real DNS zone on loopback, a message sent through the SMTP transport (signed
 * there) to a real SMTP server, and what arrived authenticated with mailauth against that zone, as a
 * receiver would: DKIM pass, SPF pass for the relay's address, DMARC pass.
 */
import { randomUUID } from 'node:crypto';
import { composeFor } from '@mailroom/core';
import { type SmtpTransport, smtpTransport } from '@mailroom/smtp';
import { authenticate } from 'mailauth';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  checkDomain,
  type DkimAlgorithm,
  domainRecords,
  generateDkimKey,
  mailauthResolver,
  newSelector,
  openKey,
  sealKey,
} from '../packages/core/src/domains/index.js';
import { type DnsZoneServer, publish, startDnsZone } from './support/dns-zone.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'acme.example';
const RETURN_PATH = { domain: `bounces.${DOMAIN}`, mx: `inbound.${DOMAIN}` };
/** Where the sink sees the relay connect from: the address SPF must pass for. */
const RELAY_ADDRESS = '127.0.0.1';
const SECRET = 'installation-secret-for-the-test';

let dns: DnsZoneServer;
let sink: SmtpSink;
let transport: SmtpTransport;

beforeAll(async () => {
  [dns, sink] = await Promise.all([startDnsZone({}), startSmtpSink()]);
  transport = smtpTransport({ host: sink.host, port: sink.port });
});
afterEach(() => sink.clear());
afterAll(async () => {
  await transport.close?.();
  await Promise.all([sink.close(), dns.close()]);
});

/** A domain onboarded as the engine will: key made, sealed, records published, check passed. */
async function onboard(algorithm: DkimAlgorithm) {
  const key = await generateDkimKey(algorithm);
  const selector = newSelector(new Date(), algorithm);
  const label = `${DOMAIN}/${selector}`;
  const sealed = sealKey(key.privateKey, SECRET, label);
  const plan = { domain: DOMAIN, relay: { addresses: [RELAY_ADDRESS] }, returnPath: RETURN_PATH };
  dns.zone = publish({}, domainRecords({ ...plan, dkim: [{ selector, ...key }] }));
  const check = await checkDomain({ ...plan, dkim: { selector, ...key }, resolver: dns.resolver() });
  expect(check.state, JSON.stringify(check.findings)).toBe('verified');
  return { selector, privateKey: openKey(sealed, SECRET, label) };
}

/** Sends one message from the domain with a VERP return path; answers what the receiving server got. */
async function sendFromDomain(dkim: { selector: string; privateKey: string }) {
  await transport.send(
    composeFor(transport, {
      messageId: `<${randomUUID()}@${DOMAIN}>`,
      from: { address: `news@${DOMAIN}`, name: 'Acme News' },
      to: { address: 'reader@example.org', name: 'Reader' },
      subject: 'Proven sender',
      text: 'This message is signed with the domain key Mailroom made.',
      html: '<p>This message is signed with the domain key <b>Mailroom</b> made.</p>',
      attachments: [],
      headers: { 'List-Unsubscribe': `<mailto:unsubscribe@${DOMAIN}>` },
      dkim: { ...dkim, domain: DOMAIN },
      envelopeFrom: `b+token123@${RETURN_PATH.domain}`,
    }),
  );
  const [received] = await sink.waitFor(1);
  if (!received) throw new Error('nothing arrived');
  return received;
}

async function authenticated(raw: Buffer, mailFrom: string, ip = RELAY_ADDRESS) {
  return authenticate(raw, {
    ip,
    helo: 'relay.test',
    sender: mailFrom,
    mta: 'mx.example.org',
    resolver: mailauthResolver(dns.resolver()).resolve,
    disableArc: true,
    disableBimi: true,
  });
}

describe.each<DkimAlgorithm>(['rsa', 'ed25519'])('a message from a verified domain (%s key)', (algorithm) => {
  it('passes DKIM, SPF for the relay address and DMARC at the receiver', async () => {
    const dkim = await onboard(algorithm);
    const received = await sendFromDomain(dkim);
    expect(received.envelope.mailFrom).toBe(`b+token123@${RETURN_PATH.domain}`);
    const result = await authenticated(received.raw, received.envelope.mailFrom);
    expect(result.dkim.results).toHaveLength(1);
    expect(result.dkim.results[0]).toMatchObject({
      signingDomain: DOMAIN,
      selector: dkim.selector,
      status: { result: 'pass', header: { a: algorithm === 'rsa' ? 'rsa-sha256' : 'ed25519-sha256' } },
    });
    expect(result.spf).toMatchObject({ domain: RETURN_PATH.domain, status: { result: 'pass' } });
    expect(result.dmarc).toMatchObject({ status: { result: 'pass' } });
    expect(result.dmarc === false ? undefined : result.dmarc.alignment).toMatchObject({
      dkim: { result: DOMAIN },
      spf: { result: RETURN_PATH.domain },
    });
  });
});

describe('the same message where the zone is wrong', () => {
  it('fails DKIM when another key is published, and DMARC too from an address SPF does not name', async () => {
    const dkim = await onboard('rsa');
    const received = await sendFromDomain(dkim);
    const other = await generateDkimKey('rsa');
    dns.zone[`${dkim.selector}._domainkey.${DOMAIN}`] = { TXT: [`v=DKIM1; k=rsa; p=${other.publicKey}`] };
    const result = await authenticated(received.raw, received.envelope.mailFrom, '198.51.100.99');
    expect(result.dkim.results[0]?.status.result).toBe('fail');
    expect(result.spf).toMatchObject({ status: { result: 'softfail' } });
    expect(result.dmarc).toMatchObject({ status: { result: 'fail' } });
  });
});
