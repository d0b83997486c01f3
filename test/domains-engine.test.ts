/**
 * Sender domains through the engine, end to end: a domain added (its key made and sealed), its records
 * published in a real DNS zone on loopback, verified, and mail from it sent through the SMTP transport to a
 * real SMTP server, where mailauth authenticates it against the zone as a receiver would. Then what goes
 * wrong: each broken record and its named finding, the sending policy (`warn`, `enforce`), a DNS server
 * that does not answer, a key rotation, and the scheduled re-check that emits `domain.failed`.
 */
import {
  createMailroom,
  type DnsResolver,
  type DomainView,
  type Logger,
  type Mailroom,
  type MailroomOptions,
  manualClock,
  silentLogger,
} from '@mailroom/core';
import { type SmtpTransport, smtpTransport } from '@mailroom/smtp';
import { authenticate } from 'mailauth';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mailauthResolver } from '../packages/core/src/domains/dns-lookup.js';
import { type DnsZoneServer, publish, startDnsZone, startSilentDns, type Zone } from './support/dns-zone.js';
import { type SinkMessage, type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { storeCases } from './support/stores.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const DOMAIN = 'acme.example';
const SENDER = `news@${DOMAIN}`;
const BOUNCES = `bounces.${DOMAIN}`;
const INBOUND = `inbound.${DOMAIN}`;
/** The address the sink sees the relay connect from: SPF must pass for it. */
const RELAY = '127.0.0.1';
const DAY = 86_400_000;

let dns: DnsZoneServer;
let sink: SmtpSink;
let silent: Awaited<ReturnType<typeof startSilentDns>>;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [dns, sink, silent, receiver] = await Promise.all([
    startDnsZone({}),
    startSmtpSink(),
    startSilentDns(),
    startWebhookReceiver(),
  ]);
});
afterAll(async () => {
  await Promise.all([dns.close(), sink.close(), silent.close(), receiver.close()]);
});

/** A domain view that must be verified; on failure the findings say which record was not read. */
function expectVerified(view: DomainView): void {
  expect(view.state, JSON.stringify(view.findings, null, 1)).toBe('verified');
}

describe.each(storeCases())('sender domains on $name', ({ make }) => {
  let mailroom: Mailroom;
  // The engine of the running test, closed once (a test may replace it with `engine()`).
  let live: Mailroom | undefined;
  let transport: SmtpTransport;
  let secret: string;
  let projectId: string;
  /** Where the engine's checks resolve: the zone, or a server that never answers. */
  let target: DnsResolver;
  const warnings: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
  const logger: Logger = {
    ...silentLogger,
    warn: (obj, msg) => warnings.push({ obj: obj as Record<string, unknown>, msg }),
  };
  const clock = manualClock(new Date());

  async function engine(options: Partial<MailroomOptions> = {}): Promise<void> {
    await live?.close();
    transport = smtpTransport({ host: sink.host, port: sink.port });
    mailroom = createMailroom({
      store: await make(),
      transport,
      clock,
      logger,
      bounces: { domain: BOUNCES },
      fetch: { allowHosts: [receiver.host] },
      webhooks: { retryScheduleMs: [20, 20, 20] },
      // MIME built and signed on the main thread, as `'auto'` does on one core: a render thread started
      // from the sources costs about a second of CPU, and every test opens an engine. The signing tests
      // below sign on a render thread (the domain's key reaches it with the mailing's parts).
      worker: { renderThreads: 0 },
      ...options,
      domains: {
        resolver: { resolve: (name, type) => target.resolve(name, type) },
        relay: { addresses: [RELAY] },
        checkEveryMs: 0,
        ...options.domains,
      },
    });
    live = mailroom;
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
  }

  beforeEach(async () => {
    target = dns.resolver();
    dns.zone = {};
    warnings.length = 0;
    sink.clear();
    clock.set(new Date());
    await engine();
  });
  afterEach(async () => {
    await live?.close();
    live = undefined;
  });

  /** Adds the domain and publishes every record it answers. */
  async function onboard(keyType: 'rsa' | 'ed25519' = 'rsa'): Promise<DomainView> {
    const added = await mailroom.addDomain(secret, DOMAIN, {
      keyType,
      returnPath: BOUNCES,
      returnPathMx: INBOUND,
    });
    dns.zone = publish({}, added.records);
    const verified = await mailroom.verifyDomain(secret, DOMAIN);
    expect(verified.state, JSON.stringify(verified.findings, null, 1)).toBe('verified');
    return verified;
  }

  /** Sends one message from the domain and answers what the receiving server got. */
  async function sendOne(subject = 'Proven sender'): Promise<SinkMessage> {
    const before = sink.messages.length;
    await mailroom.send(secret, {
      subject,
      sender: SENDER,
      message: '<p>Signed with the key Mailroom made.</p>',
      recipients: 'reader@example.org',
    });
    await mailroom.worker.drain();
    const all = await sink.waitFor(before + 1);
    return all[before] as SinkMessage;
  }

  /** What a receiver's checks say of a message, against the zone as it is now. */
  function authenticated(message: SinkMessage) {
    return authenticate(message.raw, {
      ip: RELAY,
      helo: 'relay.test',
      sender: message.envelope.mailFrom,
      mta: 'mx.example.org',
      resolver: mailauthResolver(dns.resolver()).resolve,
      disableArc: true,
      disableBimi: true,
    });
  }

  describe.each(['rsa', 'ed25519'] as const)('a verified domain (%s key)', (keyType) => {
    it('signs mail from it with its key: DKIM, SPF for the relay address and DMARC pass at the receiver', async () => {
      await engine({ worker: { renderThreads: 1 } });
      const view = await onboard(keyType);
      expect(view.signingSelector).toBe(view.keys[0]?.selector);
      expect(view.keys[0]).toMatchObject({ state: 'active', algorithm: keyType });
      const received = await sendOne();
      expect(received.envelope.mailFrom).toMatch(new RegExp(`^b\\+.+@${BOUNCES.replaceAll('.', '\\.')}$`));
      const result = await authenticated(received);
      expect(result.dkim.results).toHaveLength(1);
      expect(result.dkim.results[0]).toMatchObject({
        signingDomain: DOMAIN,
        selector: view.signingSelector,
        status: { result: 'pass', header: { a: keyType === 'rsa' ? 'rsa-sha256' : 'ed25519-sha256' } },
      });
      expect(result.spf).toMatchObject({ domain: BOUNCES, status: { result: 'pass' } });
      expect(result.dmarc).toMatchObject({ status: { result: 'pass' } });
    });
  });

  it('keeps the private key sealed in the store and out of every answer', async () => {
    const view = await onboard();
    const stored = await mailroom.store.getDomain(projectId, DOMAIN);
    const sealed = stored?.keys[0]?.sealedPrivateKey ?? '';
    expect(sealed).toMatch(/^mrk1\./);
    expect(sealed).not.toContain('PRIVATE KEY');
    const answers = JSON.stringify([
      view,
      await mailroom.listDomains(secret),
      await mailroom.getDomain(secret, DOMAIN),
    ]);
    expect(answers).not.toContain('PRIVATE KEY');
    expect(answers).not.toContain(sealed);
    expect(answers).not.toContain('sealed');
  });

  it('sends unsigned by the domain while its key record is not seen, signs once it is', async () => {
    const added = await mailroom.addDomain(secret, DOMAIN, { returnPath: BOUNCES, returnPathMx: INBOUND });
    expect(added).toMatchObject({ state: 'pending', check: null, signingSelector: null });
    dns.zone = publish(
      {},
      added.records.filter((r) => r.kind !== 'dkim'),
    );
    const pending = await mailroom.verifyDomain(secret, DOMAIN);
    expect(pending).toMatchObject({ state: 'pending', check: 'failed', signingSelector: null });
    const unsigned = await sendOne();
    expect((await authenticated(unsigned)).dkim.results[0]?.status.result).toBe('none');
    publish(
      dns.zone,
      added.records.filter((r) => r.kind === 'dkim'),
    );
    expect((await mailroom.verifyDomain(secret, DOMAIN)).signingSelector).toBe(added.keys[0]?.selector);
    const signed = await sendOne();
    expect((await authenticated(signed)).dkim.results[0]?.status.result).toBe('pass');
  });

  /** Each way a published zone can go wrong, and the finding it gives. */
  const BROKEN: Array<{
    what: string;
    kind: string;
    state: 'missing' | 'wrong';
    problem: RegExp;
    name: (view: DomainView) => string;
    breakZone: (zone: Zone, view: DomainView) => void;
  }> = [
    {
      what: 'the DKIM record removed',
      kind: 'dkim',
      state: 'missing',
      problem: /No DKIM key is published at mr\d+\._domainkey\.acme\.example/,
      name: (view) => view.keys[0]?.record.name ?? '',
      breakZone: (zone, view) => {
        delete zone[view.keys[0]?.record.name ?? ''];
      },
    },
    {
      what: 'another key in the DKIM record',
      kind: 'dkim',
      state: 'wrong',
      problem: /another key than the domain's/,
      name: (view) => view.keys[0]?.record.name ?? '',
      breakZone: (zone, view) => {
        zone[view.keys[0]?.record.name ?? ''] = {
          TXT: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrongwrongwrong'],
        };
      },
    },
    {
      what: 'the SPF record removed',
      kind: 'spf',
      state: 'missing',
      problem: /No SPF record at acme\.example/,
      name: () => DOMAIN,
      breakZone: (zone) => {
        zone[DOMAIN] = { TXT: [] };
      },
    },
    {
      what: 'an SPF record that does not name the relay',
      kind: 'spf',
      state: 'wrong',
      problem: /gives 127\.0\.0\.1 "softfail.*not pass/,
      name: () => DOMAIN,
      breakZone: (zone) => {
        zone[DOMAIN] = { TXT: ['v=spf1 ip4:198.51.100.1 ~all'] };
      },
    },
    {
      what: 'an SPF record with an error (permerror)',
      kind: 'spf',
      state: 'wrong',
      problem: /has an error: permerror/,
      name: () => DOMAIN,
      breakZone: (zone) => {
        zone[DOMAIN] = { TXT: ['v=spf1 ip4:127.0.0.1 include ~all'] };
      },
    },
    {
      what: 'two SPF records',
      kind: 'spf',
      state: 'wrong',
      problem: /2 SPF records/,
      name: () => DOMAIN,
      breakZone: (zone) => {
        zone[DOMAIN] = { TXT: ['v=spf1 ip4:127.0.0.1 ~all', 'v=spf1 mx ~all'] };
      },
    },
    {
      what: 'the DMARC record removed',
      kind: 'dmarc',
      state: 'missing',
      problem: /No DMARC record at _dmarc\.acme\.example/,
      name: () => `_dmarc.${DOMAIN}`,
      breakZone: (zone) => {
        delete zone[`_dmarc.${DOMAIN}`];
      },
    },
    {
      what: 'DMARC misaligned (strict SPF alignment, and no DKIM key)',
      kind: 'dmarc',
      state: 'wrong',
      problem: /fails DMARC: DKIM does not pass, and the return path bounces\.acme\.example is not aligned/,
      name: () => `_dmarc.${DOMAIN}`,
      breakZone: (zone, view) => {
        delete zone[view.keys[0]?.record.name ?? ''];
        zone[`_dmarc.${DOMAIN}`] = { TXT: ['v=DMARC1; p=none; aspf=s'] };
      },
    },
    {
      what: "the return path's MX removed",
      kind: 'return-path-mx',
      state: 'missing',
      problem: /No MX at bounces\.acme\.example/,
      name: () => BOUNCES,
      breakZone: (zone) => {
        zone[BOUNCES] = { TXT: zone[BOUNCES]?.TXT ?? [] };
      },
    },
    {
      what: "the return path's SPF removed",
      kind: 'return-path-spf',
      state: 'missing',
      problem: /No SPF record at bounces\.acme\.example/,
      name: () => BOUNCES,
      breakZone: (zone) => {
        zone[BOUNCES] = { MX: zone[BOUNCES]?.MX ?? [] };
      },
    },
  ];

  it.each(BROKEN)('$what: the named finding, and under enforce a 403 naming the record', async (broken) => {
    await engine({ domains: { sending: 'enforce' } });
    const view = await onboard();
    broken.breakZone(dns.zone, view);
    const checked = await mailroom.verifyDomain(secret, DOMAIN);
    expect(checked).toMatchObject({ state: 'failed', check: 'failed' });
    const found = checked.findings?.find((f) => f.kind === broken.kind);
    expect(found, JSON.stringify(checked.findings, null, 1)).toMatchObject({
      state: broken.state,
      name: broken.name(view),
    });
    expect(found?.problem).toMatch(broken.problem);
    if (broken.state === 'missing') expect(found?.expected).toBeTruthy();
    // The first required record broken is the one the refusal names.
    const first = checked.findings?.find(
      (f) => !f.optional && (f.state === 'missing' || f.state === 'wrong'),
    );
    const refusal = await mailroom
      .send(secret, { subject: 'x', sender: SENDER, message: 'x', recipients: 'reader@example.org' })
      .then(
        () => undefined,
        (error: unknown) => error as { code: string; status: number; message: string },
      );
    expect(refusal).toMatchObject({ code: 'DOMAIN_NOT_VERIFIED', status: 403 });
    expect(refusal?.message).toContain(first?.name);
    expect(refusal?.message).toContain(DOMAIN);
  });

  it('enforce: refuses a domain never added and one not verified yet; accepts it once verified', async () => {
    await engine({ domains: { sending: 'enforce' } });
    const send = () =>
      mailroom.send(secret, { subject: 'x', sender: SENDER, message: 'x', recipients: 'reader@example.org' });
    await expect(send()).rejects.toMatchObject({
      code: 'DOMAIN_NOT_VERIFIED',
      message: expect.stringMatching(/acme\.example is not a domain of this project/),
    });
    const added = await mailroom.addDomain(secret, DOMAIN);
    await expect(send()).rejects.toMatchObject({
      code: 'DOMAIN_NOT_VERIFIED',
      message: expect.stringMatching(/acme\.example is not verified yet/),
    });
    dns.zone = publish({}, added.records);
    expectVerified(await mailroom.verifyDomain(secret, DOMAIN));
    await expect(send()).resolves.toMatchObject({ status: 'queued' });
    await mailroom.worker.drain();
    expect(sink.messages).toHaveLength(1);
  });

  it('warn (the default): sends from an unverified domain and warns once per domain', async () => {
    await mailroom.addDomain(secret, DOMAIN);
    await mailroom.admin.addSender(projectId, { address: 'hello@elsewhere.example' });
    for (const sender of [SENDER, SENDER, 'hello@elsewhere.example', SENDER]) {
      await mailroom.send(secret, { subject: 'x', sender, message: 'x', recipients: 'reader@example.org' });
    }
    await mailroom.worker.drain();
    expect(sink.messages).toHaveLength(4);
    const domainWarnings = warnings.filter((w) => w.msg === 'mail sent from a domain that is not verified');
    expect(domainWarnings.map((w) => w.obj.domain)).toEqual([DOMAIN, 'elsewhere.example']);
    expect(await mailroom.listDomainWarnings(secret)).toMatchObject([
      { domain: DOMAIN, problem: expect.stringMatching(/not verified yet/) },
      { domain: 'elsewhere.example', problem: expect.stringMatching(/not a domain of this project/) },
    ]);
  });

  it('a DNS server that does not answer: "no-answer", never verified, and a verified domain stays so', async () => {
    const added = await mailroom.addDomain(secret, DOMAIN, { returnPath: BOUNCES, returnPathMx: INBOUND });
    dns.zone = publish({}, added.records);
    target = silent.resolver();
    const unanswered = await mailroom.verifyDomain(secret, DOMAIN);
    expect(unanswered).toMatchObject({ state: 'pending', check: 'no-answer', signingSelector: null });
    expect(unanswered.findings?.every((f) => f.state === 'no-answer')).toBe(true);
    expect(unanswered.findings?.[0]?.problem).toMatch(/No answer from DNS .*not verified/);
    target = dns.resolver();
    expectVerified(await mailroom.verifyDomain(secret, DOMAIN));
    target = silent.resolver();
    expect(await mailroom.verifyDomain(secret, DOMAIN)).toMatchObject({
      state: 'verified',
      check: 'no-answer',
    });
    expect(await mailroom.listEvents(secret, { types: ['domain.failed'] })).toMatchObject({ items: [] });
  });

  it('rotates the key: the old signature verifies through the grace period, the new one after', async () => {
    const first = await onboard();
    const oldSelector = first.signingSelector as string;
    const before = await sendOne('before the rotation');

    const rotated = await mailroom.rotateDkim(secret, DOMAIN, { selector: 'mr2nd' });
    expect(rotated.keys.map((k) => [k.selector, k.state])).toEqual([
      [oldSelector, 'active'],
      ['mr2nd', 'pending'],
    ]);
    expect(rotated.records.filter((r) => r.kind === 'dkim').map((r) => r.name)).toEqual([
      `${oldSelector}._domainkey.${DOMAIN}`,
      `mr2nd._domainkey.${DOMAIN}`,
    ]);
    // The new record is not published yet: the domain stays verified and mail is signed with the old key.
    const waiting = await mailroom.verifyDomain(secret, DOMAIN);
    expect(waiting).toMatchObject({ state: 'verified', signingSelector: oldSelector });
    expect(waiting.findings?.find((f) => f.name.startsWith('mr2nd.'))).toMatchObject({
      state: 'missing',
      optional: true,
    });
    const during = await sendOne('while the new key is awaited');
    expect((await authenticated(during)).dkim.results[0]).toMatchObject({ selector: oldSelector });

    publish(
      dns.zone,
      rotated.records.filter((r) => r.name.startsWith('mr2nd.')),
    );
    const switched = await mailroom.verifyDomain(secret, DOMAIN);
    expect(switched.signingSelector).toBe('mr2nd');
    expect(switched.keys.map((k) => [k.selector, k.state])).toEqual([
      [oldSelector, 'retiring'],
      ['mr2nd', 'active'],
    ]);
    expect(switched.keys[0]?.retireAt?.getTime()).toBe(clock.now().getTime() + 7 * DAY);
    const after = await sendOne('after the rotation');
    const afterResult = await authenticated(after);
    expect(afterResult.dkim.results[0]).toMatchObject({ selector: 'mr2nd', status: { result: 'pass' } });
    expect(afterResult.dmarc).toMatchObject({ status: { result: 'pass' } });
    // In the grace period the old key's record is still there: mail signed before still verifies.
    expect((await authenticated(before)).dkim.results[0]?.status.result).toBe('pass');

    clock.advance(7 * DAY + 1);
    expect(await mailroom.checkDueDomains()).toBe(1);
    const retired = await mailroom.getDomain(secret, DOMAIN);
    expect(retired.keys.map((k) => [k.selector, k.state])).toEqual([
      [oldSelector, 'retired'],
      ['mr2nd', 'active'],
    ]);
    expect(retired.records.filter((r) => r.kind === 'dkim').map((r) => r.name)).toEqual([
      `mr2nd._domainkey.${DOMAIN}`,
    ]);
    expect((await mailroom.store.getDomain(projectId, DOMAIN))?.keys[0]?.sealedPrivateKey).toBeNull();
    // The owner removes the old record: the new signature verifies, the old one no longer does.
    delete dns.zone[`${oldSelector}._domainkey.${DOMAIN}`];
    expect((await authenticated(after)).dkim.results[0]?.status.result).toBe('pass');
    expect((await authenticated(before)).dkim.results[0]?.status.result).not.toBe('pass');
    expectVerified(await mailroom.verifyDomain(secret, DOMAIN));
  });

  it('the running worker re-checks on a schedule: a lost record emits domain.failed once (event and webhook)', async () => {
    await engine({ domains: { checkEveryMs: 25 } });
    const hook = await mailroom.webhooks.add(secret, {
      url: receiver.url,
      events: ['domain.failed', 'domain.verified'],
    });
    receiver.secret = hook.secret;
    receiver.received.length = 0;
    // Verified a day ago (webhooks are signed with the engine's clock, and a receiver refuses a signature
    // more than 5 minutes off, so the check that fails must run at the real time).
    clock.set(new Date(Date.now() - DAY - 60_000));
    const view = await onboard();
    delete dns.zone[view.keys[0]?.record.name ?? ''];
    clock.set(new Date());
    mailroom.worker.start();
    try {
      await receiver.waitFor((all) => all.some((r) => r.payload.type === 'domain.failed'));
    } finally {
      await mailroom.worker.stop();
    }
    // Due again an hour later: still failed, and not announced again.
    clock.advance(2 * 3_600_000);
    expect(await mailroom.checkDueDomains()).toBe(1);
    await mailroom.webhooks.drain();
    const failed = receiver.received.filter((r) => r.payload.type === 'domain.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.verified).toBe(true);
    expect(failed[0]?.payload.data).toMatchObject({
      project_id: projectId,
      domain: {
        name: DOMAIN,
        state: 'failed',
        previous_state: 'verified',
        findings: expect.arrayContaining([
          expect.objectContaining({ kind: 'dkim', state: 'missing', name: view.keys[0]?.record.name }),
        ]),
      },
    });
    const events = await mailroom.listEvents(secret, { types: ['domain.verified', 'domain.failed'] });
    expect(events.items.map((e) => e.type)).toEqual(['domain.verified', 'domain.failed']);
    expect((await mailroom.getDomain(secret, DOMAIN)).state).toBe('failed');
  });
});
