import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inboundFixture } from '../packages/core/test/inbound-fixtures.js';
import { type BouncingRelay, startBouncingRelay } from './support/bouncing-relay.js';
import { type RunningCli, startCli, waitForOutput } from './support/cli-harness.js';
import { dashboardCookie } from './support/dashboard-session.js';

/**
 * Acceptance of issue 25 with `mailroom serve` and a loopback relay that mails reports back to each
 * message's return path at the inbound port: a DMARC rejection (5.7.26) of 200 recipients suppresses none
 * and yields 200 `email.bounced` events of reason `authfailure`, class `sender-side`; a user unknown
 * (5.1.1) of 10 suppresses those 10. Bad input (truncated MIME, a 50 MB report, a report naming another
 * project's delivery, a forged token) is ignored with a reason counted in the metrics, changes nothing,
 * and the listener keeps serving.
 */

const DOMAIN = 'bounces.acme.test';
const DMARC = Array.from({ length: 200 }, (_, i) => `user${i}@gmail.test`);
const GONE = Array.from({ length: 10 }, (_, i) => `gone${i}@example.org`);

describe('bounce reasons end to end (mailroom serve, loopback relay)', () => {
  let dir: string;
  let db: string;
  let relay: BouncingRelay;
  let cli: RunningCli;
  let base = '';
  let secret = '';
  let projectId = '';
  let sender = '';
  let inboundPort = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-reasons-'));
    db = join(dir, 'mailroom.db');
    relay = await startBouncingRelay({
      ...Object.fromEntries(DMARC.map((a) => [a, { fixture: 'dsn-dmarc' }])),
      ...Object.fromEntries(GONE.map((a) => [a, { fixture: 'dsn-postfix-hard' }])),
    });
    cli = startCli(dir, [
      'serve',
      '--port',
      '0',
      '--database',
      db,
      '--smtp',
      `smtp://127.0.0.1:${relay.port}`,
      '--bounce-domain',
      DOMAIN,
      '--inbound-port',
      '0',
      '--inbound-host',
      '127.0.0.1',
      '--inbound-trusted-relay',
      '127.0.0.1/32',
      '--inbound-trusted-relay',
      '::1',
      '--metrics',
      '--log-level',
      'error',
    ]);
    [, base = ''] = await waitForOutput(cli, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const [, port] = await waitForOutput(cli, /inbound SMTP on 127\.0\.0\.1:(\d+)/);
    inboundPort = Number(port);
    relay.inboundPort = inboundPort;
    [, projectId = ''] = await waitForOutput(cli, /\((prj_[a-z0-9]+)\) with the sender/);
    [secret = ''] = await waitForOutput(cli, /sk_live_[\w-]+/);
    [, sender = ''] = await waitForOutput(cli, /with the sender (\S+)/);
  });

  afterAll(async () => {
    cli?.stop();
    await cli?.done;
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function api(path: string, body?: unknown, key = secret): Promise<Record<string, unknown>> {
    const res = await fetch(`${base}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as { data?: Record<string, unknown> };
    expect(res.status, JSON.stringify(json)).toBe(200);
    return json.data ?? {};
  }

  const broadcast = async (recipients: string[], key = secret) =>
    (await api('/send/mail/broadcast', { subject: 'News', sender, message: 'Hello', recipients }, key))
      .broadcastRef as string;

  async function counts(ref: string): Promise<Record<string, number>> {
    const status = startCli(dir, [
      'broadcast',
      'status',
      '--project',
      projectId,
      ref,
      '--json',
      '--database',
      db,
    ]);
    expect(await status.done).toBe(0);
    return (JSON.parse(status.out) as { counts: Record<string, number> }).counts;
  }

  /** The suppressed addresses among `addresses`, read from the database the server uses. */
  async function suppressed(addresses: string[], project = projectId): Promise<string[]> {
    const store = sqlStore({ url: db });
    try {
      return (await store.findSuppressed(project, addresses)).map((s) => s.address).sort();
    } finally {
      await store.close();
    }
  }

  async function bouncedEvents(): Promise<Array<{ data: Record<string, unknown> }>> {
    const all: Array<{ data: Record<string, unknown> }> = [];
    let after: string | null = null;
    do {
      const page = await api(`/events?types=email.bounced&limit=100${after ? `&after=${after}` : ''}`);
      all.push(...(page.events as Array<{ data: Record<string, unknown> }>));
      after = page.next as string | null;
    } while (after);
    return all;
  }

  /** Mails raw bytes to the inbound listener as a relay would; resolves with its reply. */
  async function mailIn(to: string, raw: Buffer): Promise<string> {
    const client = smtpTransport({ host: '127.0.0.1', port: inboundPort, ignoreTLS: true });
    try {
      return (await client.send({ messageId: '<r@relay.test>', envelope: { from: '', to: [to] }, raw }))
        .response;
    } catch (error) {
      return (error as { response?: string }).response ?? String(error);
    } finally {
      await client.close();
    }
  }

  async function metric(pattern: RegExp): Promise<number> {
    const text = await (await fetch(`${base}/metrics`)).text();
    const line = text.split('\n').find((l) => pattern.test(l));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  }

  it('a DMARC rejection of 200 suppresses none; a user unknown of 10 suppresses those 10', async () => {
    // The relay reports once it took all 200 (reported as they go, the refusals would have the guard
    // pause the broadcast part way, which is the guard's business, not this test's).
    relay.holdReports();
    const ref = await broadcast(DMARC);
    await vi.waitFor(
      () => expect(relay.accepted.filter((a) => DMARC.includes(a.recipient)).length).toBe(200),
      {
        timeout: 60_000,
        interval: 100,
      },
    );
    relay.releaseReports();
    await vi.waitFor(() => expect(relay.mailedBack).toHaveLength(200), { timeout: 60_000, interval: 100 });
    expect(relay.mailedBack.every((m) => /^250 .*applied/.test(m.reply))).toBe(true);
    await vi.waitFor(async () => expect(await counts(ref)).toMatchObject({ bounced: 200 }), {
      timeout: 20_000,
      interval: 200,
    });
    expect(await suppressed(DMARC)).toEqual([]);
    const events = await bouncedEvents();
    expect(events).toHaveLength(200);
    for (const e of events) {
      expect(e.data.bounce).toMatchObject({ reason: 'authfailure', class: 'sender-side', status: '5.7.26' });
    }
    expect(new Set(events.map((e) => (e.data.delivery as { address: string }).address))).toEqual(
      new Set(DMARC),
    );
    // The dashboard, per destination: Gmail refused the sender 200 times, for its DMARC.
    const cookie = await dashboardCookie(base, secret);
    const page = await (await fetch(`${base}/dashboard/broadcasts/${ref}`, { headers: { cookie } })).text();
    expect(page).toMatch(/<tr data-domain="gmail\.test">.*?data-sender-side>200<.*?data-recipient-hard>0</);
    expect(page).toMatch(/data-reason="authfailure" data-class="sender-side">.*?<\/code> 200/);

    const second = await broadcast(GONE);
    await vi.waitFor(() => expect(relay.mailedBack).toHaveLength(210), { timeout: 30_000, interval: 100 });
    await vi.waitFor(async () => expect(await counts(second)).toMatchObject({ bounced: 10 }), {
      timeout: 20_000,
      interval: 200,
    });
    expect(await suppressed([...DMARC, ...GONE])).toEqual([...GONE].sort());
    const hard = (await bouncedEvents()).filter(
      (e) => (e.data.bounce as { class: string }).class !== 'sender-side',
    );
    expect(hard.map((e) => e.data.bounce)).toEqual(
      GONE.map(() =>
        expect.objectContaining({ reason: 'userunknown', class: 'recipient-hard', status: '5.1.1' }),
      ),
    );
    expect(await metric(/^mailroom_inbound_signals_total\{kind="sender-side",reason="authfailure"\}/)).toBe(
      200,
    );
    expect(await metric(/^mailroom_inbound_signals_total\{kind="hard-bounce",reason="userunknown"\}/)).toBe(
      10,
    );
  }, 120_000);

  it('ignores bad input with a counted reason, changes nothing, and keeps serving', async () => {
    // A second project, and one message of each project.
    const created = startCli(dir, ['project', 'create', 'Other', '--json', '--database', db]);
    expect(await created.done).toBe(0);
    const other = JSON.parse(created.out) as { project: { id: string }; secret: string };
    const added = startCli(dir, ['sender', 'add', '--project', other.project.id, sender, '--database', db]);
    expect(await added.done, added.err).toBe(0);
    const mine = await broadcast(['ann@example.net']);
    const theirs = await broadcast(['bob@example.net'], other.secret);
    await vi.waitFor(
      () => expect(relay.accepted.filter((m) => m.recipient.endsWith('@example.net'))).toHaveLength(2),
      { timeout: 20_000, interval: 50 },
    );
    const ann = relay.accepted.find((m) => m.recipient === 'ann@example.net') as (typeof relay.accepted)[0];
    const bob = relay.accepted.find((m) => m.recipient === 'bob@example.net') as (typeof relay.accepted)[0];
    await vi.waitFor(async () => expect(await counts(mine)).toMatchObject({ sent: 1 }), { timeout: 10_000 });
    const fixture = (messageId: string) =>
      inboundFixture('dsn-postfix-hard', { returnPath: ann.mailFrom, recipient: ann.recipient, messageId });
    const before = {
      foreign: await metric(/reason="other-project"/),
      forged: await metric(/reason="forged-token"/),
      big: await metric(/reason="too-large"/),
      truncated: await metric(/report="unrecognised",outcome="ignored",reason="unrecognised"/),
    };

    // Ann's token, Bob's Message-ID (another project's delivery): the two names disagree.
    expect(await mailIn(ann.mailFrom, fixture(bob.messageId))).toMatch(/^250 .*ignored/);
    // A token whose MAC was edited.
    const forged = ann.mailFrom.replace(/-([0-9a-f])/, (_m, c: string) => `-${c === '0' ? '1' : '0'}`);
    expect(await mailIn(forged, fixture(ann.messageId))).toMatch(/^250 .*ignored/);
    // Truncated MIME: cut before any part says what failed.
    expect(await mailIn(ann.mailFrom, fixture(ann.messageId).subarray(0, 500))).toMatch(/^250 .*ignored/);
    // A 50 MB report.
    const big = Buffer.concat([fixture(ann.messageId), Buffer.alloc(50 * 1024 * 1024, 'a')]);
    expect(await mailIn(ann.mailFrom, big)).toMatch(/^552 /);

    expect(await metric(/reason="other-project"/)).toBe(before.foreign + 1);
    expect(await metric(/reason="forged-token"/)).toBe(before.forged + 1);
    expect(await metric(/reason="too-large"/)).toBe(before.big + 1);
    expect(await metric(/report="unrecognised",outcome="ignored",reason="unrecognised"/)).toBe(
      before.truncated + 1,
    );
    // Nothing changed.
    expect(await counts(mine)).toMatchObject({ sent: 1 });
    expect(await suppressed(['ann@example.net'])).toEqual([]);
    expect(await suppressed(['bob@example.net'], other.project.id)).toEqual([]);
    const theirStatus = startCli(dir, [
      'broadcast',
      'status',
      '--project',
      other.project.id,
      theirs,
      '--json',
      '--database',
      db,
    ]);
    expect(await theirStatus.done).toBe(0);
    expect((JSON.parse(theirStatus.out) as { counts: Record<string, number> }).counts).toMatchObject({
      sent: 1,
    });

    // The listener still serves: the genuine report is applied.
    expect(await mailIn(ann.mailFrom, fixture(ann.messageId))).toMatch(/^250 .*applied/);
    await vi.waitFor(async () => expect(await counts(mine)).toMatchObject({ bounced: 1 }), {
      timeout: 10_000,
    });
  }, 120_000);
});
