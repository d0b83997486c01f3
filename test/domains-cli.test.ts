/**
 * Sending domains from the command line, against a DNS zone on loopback (`--dns-server`): `mailroom domain
 * add|list|verify|rotate-dkim`, the CI preflight `mailroom domain check --json` (the same findings as the
 * exported `checkDomain`), bad names refused, and `mailroom serve --domain-sending enforce`: mail from a
 * domain verified over HTTP reaches a real SMTP server and authenticates at a mailauth receiver.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDomain, type DomainCheck, type DomainView } from '@mailroom/core';
import { authenticate } from 'mailauth';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mailauthResolver } from '../packages/core/src/domains/dns-lookup.js';
import { type RunningCli, runCli, startCli, waitForOutput } from './support/cli-harness.js';
import { type DnsZoneServer, publish, startDnsZone, startSilentDns } from './support/dns-zone.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'acme.example';

const run = runCli;

let dns: DnsZoneServer;
let silent: Awaited<ReturnType<typeof startSilentDns>>;
let sink: SmtpSink;
beforeAll(async () => {
  [dns, silent, sink] = await Promise.all([startDnsZone({}), startSilentDns(), startSmtpSink()]);
});
afterAll(async () => {
  await Promise.all([dns.close(), silent.close(), sink.close()]);
});

describe('mailroom domain', () => {
  let dir: string;
  let db: string;
  let projectId: string;
  let secret: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-domains-'));
    db = join(dir, 'mailroom.db');
    dns.zone = {};
    sink.clear();
    const created = await run(dir, ['project', 'create', 'Acme', '--database', db, '--json']);
    ({
      project: { id: projectId },
      secret,
    } = JSON.parse(created.out) as { project: { id: string }; secret: string });
    expect(
      (await run(dir, ['sender', 'add', '--project', projectId, `news@${DOMAIN}`, '--database', db])).code,
    ).toBe(0);
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const domain = (...argv: string[]) => run(dir, ['domain', ...argv, '--database', db]);

  it('adds, verifies, lists and rotates a domain; check --json gives what checkDomain() gives', async () => {
    const added = await domain('add', '--project', projectId, 'Acme.Example.', '--relay-ip', '127.0.0.1');
    expect(added.code, added.err).toBe(0);
    expect(added.out).toMatch(/Added acme\.example \(pending\)\. Publish these DNS records:/);
    expect(added.out).toMatch(
      /TXT {2}mr\d{8}\._domainkey\.acme\.example\n {6}v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]+\n/,
    );
    expect(added.out).toContain('TXT  acme.example\n      v=spf1 ip4:127.0.0.1 ~all');
    expect(added.out).toContain(`Then run: mailroom domain verify --project ${projectId} acme.example`);
    expect(added.out).not.toContain('PRIVATE KEY');

    const listed = JSON.parse(
      (await domain('list', '--project', projectId, '--relay-ip', '127.0.0.1', '--json')).out,
    ) as DomainView[];
    expect(listed.map((d) => [d.domain, d.state])).toEqual([[DOMAIN, 'pending']]);
    const selector = listed[0]?.keys[0]?.selector as string;

    const unpublished = await domain('verify', '--project', projectId, DOMAIN, '--dns-server', dns.address);
    expect(unpublished.code).toBe(1);
    expect(unpublished.out).toMatch(/acme\.example: pending/);
    expect(unpublished.out).toMatch(/missing {3}dkim +TXT mr\d+\._domainkey\.acme\.example/);
    expect(unpublished.out).toMatch(/publish: v=DKIM1; k=rsa; p=/);
    // The preflight of the same kept domain says what verify says for the same findings (issue 37).
    const precheck = await domain('check', DOMAIN, '--project', projectId, '--dns-server', dns.address);
    expect(precheck.code).toBe(1);
    expect(precheck.out).toContain('acme.example: pending (a required record is missing or wrong)');
    expect(precheck.out).not.toMatch(/: failed/);

    dns.zone = publish({}, listed[0]?.records ?? []);
    const verified = await domain(
      'verify',
      '--project',
      projectId,
      DOMAIN,
      '--dns-server',
      dns.address,
      '--relay-ip',
      '127.0.0.1',
    );
    expect(verified.code, verified.out + verified.err).toBe(0);
    expect(verified.out).toContain('acme.example: verified');
    expect(verified.out).toContain(`Mail from acme.example is signed with ${selector}.`);
    expect((await domain('list', '--project', projectId)).out).toMatch(
      new RegExp(`^acme\\.example {2}verified {2}signs with ${selector} {2}checked `, 'm'),
    );

    const preflight = [
      'check',
      DOMAIN,
      '--selector',
      selector,
      '--relay-ip',
      '127.0.0.1',
      '--dns-server',
      dns.address,
    ];
    const checked = await run(dir, ['domain', ...preflight, '--json']);
    expect(checked.code).toBe(0);
    const fromCli = JSON.parse(checked.out) as DomainCheck;
    const fromCode = await checkDomain({
      domain: DOMAIN,
      dkim: { selector },
      relay: { addresses: ['127.0.0.1'] },
      resolver: dns.resolver(),
    });
    expect(fromCli).toEqual(JSON.parse(JSON.stringify(fromCode)));
    expect(fromCli.state).toBe('verified');
    // The preflight of the kept domain: its key must be the one published.
    expect((await domain('check', DOMAIN, '--project', projectId, '--dns-server', dns.address)).code).toBe(0);

    const bimi = JSON.parse(
      (await run(dir, ['domain', ...preflight, '--bimi', '--json'])).out,
    ) as DomainCheck;
    expect(bimi.findings.at(-1)).toMatchObject({
      kind: 'bimi',
      name: `default._bimi.${DOMAIN}`,
      optional: true,
    });

    delete dns.zone[`${selector}._domainkey.${DOMAIN}`];
    const broken = await run(dir, ['domain', ...preflight]);
    expect(broken.code).toBe(1);
    expect(broken.out).toContain('acme.example: not verified (a required record is missing or wrong)');
    expect(broken.out).toContain(`No DKIM key is published at ${selector}._domainkey.acme.example`);
    const unanswered = await run(dir, ['domain', ...preflight.slice(0, -1), silent.address, '--json']);
    expect(unanswered.code).toBe(1);
    expect((JSON.parse(unanswered.out) as DomainCheck).state).toBe('no-answer');

    const rotated = await domain('rotate-dkim', '--project', projectId, DOMAIN, '--selector', 'mr2nd');
    expect(rotated.code, rotated.err).toBe(0);
    expect(rotated.out).toMatch(/New key mr2nd for acme\.example\. Publish its record/);
    expect(rotated.out).toMatch(/TXT {2}mr2nd\._domainkey\.acme\.example\n {6}v=DKIM1; k=rsa; p=/);
  });

  it.each([
    ['an IP address', '192.0.2.1', /is an IP address/],
    ['a name without a dot', 'localhost', /has no dot/],
    ['a lone trailing dot', 'acme.', /has no dot/],
    ['a slash', 'acme.example/x', /contains "\/"/],
  ])('refuses %s with a usage error naming the problem', async (_what, name, problem) => {
    const added = await domain('add', '--project', projectId, name);
    expect(added.code).toBe(2);
    expect(added.err).toMatch(problem);
    const checked = await domain('check', name, '--selector', 'mr1');
    expect(checked.code).toBe(2);
    expect(checked.err).toMatch(problem);
    expect((await domain('list', '--project', projectId)).out).toBe('No sending domains.\n');
  });

  it('refuses a check without a selector or project, and a malformed --dns-server', async () => {
    expect((await domain('check', DOMAIN)).err).toMatch(/give --selector .* or --project/);
    const bad = await domain('check', DOMAIN, '--selector', 'mr1', '--dns-server', 'dns.example:53');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--dns-server must be an IP address/);
  });

  describe('mailroom serve --domain-sending enforce --dns-server', () => {
    const running: RunningCli[] = [];
    afterEach(async () => {
      for (const cli of running.splice(0)) {
        cli.stop();
        await cli.done;
      }
    });

    it('refuses mail until the domain is verified, then sends it signed: DKIM, SPF and DMARC pass', async () => {
      const cli = startCli(dir, [
        'serve',
        '--port',
        '0',
        '--database',
        db,
        '--smtp',
        sink.url,
        '--bounce-domain',
        `bounces.${DOMAIN}`,
        '--domain-sending',
        'enforce',
        '--dns-server',
        dns.address,
        '--relay-ip',
        '127.0.0.1',
      ]);
      running.push(cli);
      const [, base = ''] = await waitForOutput(cli, /listening on (http:\/\/[\d.:]+)/);
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${secret}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return {
          status: res.status,
          json: (await res.json()) as { message: string; code?: string; data: { domain: DomainView } },
        };
      };
      const message = {
        subject: 'Hi',
        sender: `news@${DOMAIN}`,
        message: '<p>Hi</p>',
        recipients: 'r@example.org',
      };

      const added = await call('POST', '/domains', { domain: DOMAIN, returnPath: `bounces.${DOMAIN}` });
      expect(added.status).toBe(200);
      const view = added.json.data.domain as DomainView;
      dns.zone = publish(
        {},
        view.records.filter((r) => r.kind !== 'dkim'),
      );
      await call('POST', `/domains/${DOMAIN}/verify`);
      const refused = await call('POST', '/send/mail', message);
      expect(refused.status).toBe(403);
      expect(refused.json.code).toBe('DOMAIN_NOT_VERIFIED');
      expect(refused.json.message).toContain(`${view.keys[0]?.selector}._domainkey.${DOMAIN}`);

      publish(
        dns.zone,
        view.records.filter((r) => r.kind === 'dkim'),
      );
      expect((await call('POST', `/domains/${DOMAIN}/verify`)).json.data.domain.state).toBe('verified');
      expect((await call('POST', '/send/mail', message)).status).toBe(200);
      const [received] = await sink.waitFor(1, 20_000);
      if (!received) throw new Error('nothing arrived');
      const result = await authenticate(received.raw, {
        ip: '127.0.0.1',
        helo: 'relay.test',
        sender: received.envelope.mailFrom,
        mta: 'mx.example.org',
        resolver: mailauthResolver(dns.resolver()).resolve,
        disableArc: true,
        disableBimi: true,
      });
      expect(result.dkim.results[0]).toMatchObject({
        signingDomain: DOMAIN,
        selector: view.keys[0]?.selector,
        status: { result: 'pass' },
      });
      expect(result.spf).toMatchObject({ domain: `bounces.${DOMAIN}`, status: { result: 'pass' } });
      expect(result.dmarc).toMatchObject({ status: { result: 'pass' } });
    });
  });
});
