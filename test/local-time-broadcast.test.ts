import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, type ManualClock, manualClock } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli-harness.js';
import { dashboardCookie } from './support/dashboard-session.js';
import { callApi, type Listening, listenMailroom } from './support/http-harness.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { waitUntil } from './support/wait.js';

/**
 * Broadcasts at each recipient's local time, and sending windows (issue 41), end to end: HTTP on
 * 127.0.0.1, SQLite, the SMTP transport to a sink, and a clock the test moves. 2031-03-30 is the day
 * Europe moves to summer time (01:00 UTC): Berlin's 09:00 is 07:00 UTC that day, not 08:00.
 */

const DAY_START = Date.parse('2031-03-30T00:00:00.000Z');
const HOUR = 3_600_000;
const SENDER = 'news@acme.test';

/** Recipient, their zone variable, and when 09:00 local is that day (UTC). */
const ZONES = [
  { address: 'tokyo@example.test', tz: 'Asia/Tokyo', due: '2031-03-30T00:00:00.000Z' },
  { address: 'kolkata@example.test', tz: 'Asia/Kolkata', due: '2031-03-30T03:30:00.000Z' },
  // Crosses the change to summer time at 01:00 UTC: CEST (+2) by 09:00.
  { address: 'berlin@example.test', tz: 'Europe/Berlin', due: '2031-03-30T07:00:00.000Z' },
  // An unknown zone and no zone at all: the fallback, UTC.
  { address: 'mars@example.test', tz: 'Mars/Olympus_Mons', due: '2031-03-30T09:00:00.000Z' },
  { address: 'nozone@example.test', tz: undefined, due: '2031-03-30T09:00:00.000Z' },
  { address: 'newyork@example.test', tz: 'America/New_York', due: '2031-03-30T13:00:00.000Z' },
  // Sydney is past 09:00 at the start (11:00 AEDT): the next day's.
  { address: 'sydney@example.test', tz: 'Australia/Sydney', due: '2031-03-30T22:00:00.000Z' },
];

interface Envelope {
  statusCode: number;
  message: string;
  data: { broadcastRef: string; broadcast: { status: string } };
  issues?: Array<{ path: Array<string | number>; message: string }>;
}

describe('local-time broadcasts and sending windows on SQLite through the SMTP transport', () => {
  let clock: ManualClock;
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let server: Listening;
  let secret: string;
  let projectId: string;
  let dir: string;
  let url: string;

  const broadcast = (body: Record<string, unknown>) =>
    callApi<Envelope>(server.url, 'POST', '/send/mail/broadcast', body, secret);
  const arrived = (address: string) => sink.messages.filter((m) => m.envelope.rcptTo.includes(address));
  /** Runs the worker at the clock's time until it has nothing due. */
  const drain = () => mailroom.worker.drain();

  beforeAll(async () => {
    clock = manualClock(new Date(DAY_START));
    sink = await startSmtpSink();
    dir = mkdtempSync(join(tmpdir(), 'mailroom-localtime-'));
    url = join(dir, 'mailroom.db');
    mailroom = createMailroom({
      store: sqlStore({ url }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      clock,
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(created.project.id, { address: SENDER, name: 'Acme' });
    server = await listenMailroom('express', mailroom);
  });

  afterAll(async () => {
    await server?.close();
    await mailroom?.close();
    await sink?.close();
  });

  it('delivers each recipient at 09:00 in their zone (DST and a bad zone included); cancel at 10:00 UTC stops exactly those not yet due', async () => {
    const res = await broadcast({
      subject: 'Good morning',
      sender: SENDER,
      message: '<p>Good morning</p>',
      recipients: ZONES.map((z) => ({ address: z.address, variables: z.tz ? { tz: z.tz } : {} })),
      options: { localTime: { at: '09:00', timezone: 'tz', fallback: 'UTC' } },
    });
    expect(res.status).toBe(200);
    const ref = res.json.data.broadcastRef;
    const view = await mailroom.getMailing(secret, ref);
    expect(view.waiting?.map((w) => [w.hour.toISOString(), w.count])).toEqual([
      ['2031-03-30T03:00:00.000Z', 1],
      ['2031-03-30T07:00:00.000Z', 1],
      ['2031-03-30T09:00:00.000Z', 2],
      ['2031-03-30T13:00:00.000Z', 1],
      ['2031-03-30T22:00:00.000Z', 1],
    ]);
    // The dashboard's page of the broadcast and `mailroom broadcast status` say the same.
    const cookie = await dashboardCookie(server.url, secret);
    const page = await (
      await fetch(`${server.url}/dashboard/broadcasts/${ref}`, { headers: { cookie } })
    ).text();
    const shown = [...page.matchAll(/data-waiting-hour="([^"]+)">.*?<b>(\d+)<\/b>/g)].map((m) => [
      m[1],
      Number(m[2]),
    ]);
    expect(shown).toEqual(view.waiting?.map((w) => [w.hour.toISOString(), w.count]));
    const status = await runCli(dir, ['broadcast', 'status', '--project', projectId, '--database', url, ref]);
    expect(status.code, status.err).toBe(0);
    const out = status.out;
    // The CLI reads at the machine's time (years before 2031): Tokyo's hour waits too.
    expect(out).toMatch(
      /Waiting: +1 at 2031-03-30T00:00Z, 1 at 2031-03-30T03:00Z, 1 at 2031-03-30T07:00Z, 2 at 2031-03-30T09:00Z/,
    );
    // Step through the day: nothing a second before a recipient's time, their message at it.
    const order = [...new Set(ZONES.map((z) => z.due))].filter((d) => Date.parse(d) <= DAY_START + 10 * HOUR);
    for (const due of order) {
      const at = Date.parse(due);
      const expected = ZONES.filter((z) => z.due === due).map((z) => z.address);
      if (at > clock.now().getTime()) {
        clock.set(new Date(at - 1000));
        await drain();
        for (const address of expected) expect(arrived(address), `${address} before its time`).toEqual([]);
        clock.set(new Date(at));
      }
      await drain();
      await waitUntil(() => expected.every((address) => arrived(address).length === 1));
    }
    clock.set(new Date(DAY_START + 10 * HOUR));
    await drain();
    const cancelled = await mailroom.cancel(secret, ref);
    expect(cancelled.counts).toMatchObject({ sent: 5, skipped: 2 });
    clock.set(new Date(DAY_START + 3 * 24 * HOUR));
    await drain();
    expect(arrived('newyork@example.test')).toEqual([]);
    expect(arrived('sydney@example.test')).toEqual([]);
    for (const z of ZONES.slice(0, 5)) expect(arrived(z.address)).toHaveLength(1);
  });

  it('a sending window defers what falls outside it, and what it closed on, to its next opening', async () => {
    // Monday 2031-04-07, 19:30 UTC: weekdays 08:00-20:00 in the recipient's zone.
    clock.set(new Date('2031-04-07T19:30:00.000Z'));
    const window = { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '08:00', to: '20:00', timezone: 'tz' };
    const open = await broadcast({
      subject: 'Window',
      sender: SENDER,
      message: '<p>Window</p>',
      recipients: [
        { address: 'w-london@example.test', variables: { tz: 'Europe/London' } }, // 20:30 BST: closed
        { address: 'w-utc@example.test', variables: { tz: 'UTC' } }, // 19:30: open
        { address: 'w-late@example.test', variables: { tz: 'UTC' } },
      ],
      options: { window },
    });
    expect(open.status).toBe(200);
    const ref = open.json.data.broadcastRef;
    // No worker ran before the window closed at 20:00 UTC: the two due at 19:30 were not sent in it, so
    // the worker puts them back to its next opening (Tuesday 08:00) instead of sending them at night.
    clock.set(new Date('2031-04-07T20:05:00.000Z'));
    await drain();
    expect(sink.messages.filter((m) => m.envelope.rcptTo[0]?.startsWith('w-'))).toEqual([]);
    const waiting = await mailroom.getMailing(secret, ref);
    expect(waiting.waiting?.map((w) => [w.hour.toISOString(), w.count])).toEqual([
      ['2031-04-08T07:00:00.000Z', 1],
      ['2031-04-08T08:00:00.000Z', 2],
    ]);
    // Tuesday 07:00 UTC is 08:00 in London: London's opens; UTC's an hour later.
    clock.set(new Date('2031-04-08T07:00:00.000Z'));
    await drain();
    await waitUntil(() => arrived('w-london@example.test').length === 1);
    clock.set(new Date('2031-04-08T07:59:59.000Z'));
    await drain();
    expect(arrived('w-utc@example.test')).toEqual([]);
    clock.set(new Date('2031-04-08T08:00:00.000Z'));
    await drain();
    await waitUntil(
      () => arrived('w-utc@example.test').length === 1 && arrived('w-late@example.test').length === 1,
    );
    expect((await mailroom.getMailing(secret, ref)).counts.sent).toBe(3);
  });

  it('pause holds a spread broadcast past its recipients’ times; resume sends them at once', async () => {
    clock.set(new Date('2031-04-09T05:00:00.000Z'));
    const res = await broadcast({
      subject: 'Paused',
      sender: SENDER,
      message: '<p>Paused</p>',
      recipients: [{ address: 'p-berlin@example.test', variables: { tz: 'Europe/Berlin' } }],
      options: { localTime: { at: '09:00', timezone: 'tz' } },
    });
    const ref = res.json.data.broadcastRef;
    await mailroom.pauseBroadcast(secret, ref);
    clock.set(new Date('2031-04-09T08:00:00.000Z'));
    await drain();
    expect(arrived('p-berlin@example.test')).toEqual([]);
    await mailroom.resumeBroadcast(secret, ref);
    await drain();
    await waitUntil(() => arrived('p-berlin@example.test').length === 1);
  });

  it('refuses a bad time, an unknown zone and a window that ends before it starts, naming the path', async () => {
    const base = { subject: 'x', sender: SENDER, message: '<p>x</p>', recipients: 'a@example.test' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ localTime: { at: '25:00', timezone: 'tz' } }, 'options.localTime.at'],
      [{ localTime: { at: '9am', timezone: 'tz' } }, 'options.localTime.at'],
      [{ localTime: { at: '09:00', timezone: 'tz', fallback: 'Mars/Base' } }, 'options.localTime.fallback'],
      [{ localTime: { at: '09:00' } }, 'options.localTime.timezone'],
      [{ window: { from: '20:00', to: '08:00' } }, 'options.window.to'],
      [{ window: { from: '08:00', to: '20:00', days: ['someday'] } }, 'options.window.days.0'],
    ];
    for (const [options, path] of cases) {
      const res = await broadcast({ ...base, options });
      expect(res.status, path).toBe(400);
      expect(res.json.issues?.map((i) => i.path.join('.'))).toContain(path);
    }
  });
});
