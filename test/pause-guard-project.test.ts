import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { sleep, waitUntil } from './support/wait.js';

/**
 * Issue 31, the reputation guard's project rule: a relay (smtp-server on loopback) refuses one recipient in
 * four as unknown (550 5.1.1) across three small broadcasts and transactional mail, each far under a
 * broadcast rule's minimum. The project rule, judging the project's last sends as a whole, pauses the
 * project's sending with `project.hard-bounces` and its figures and window; nothing moves while paused;
 * once resumed (the list cleaned, the relay accepting) everything completes, none lost, none twice, and
 * the rule judges afresh from the resume.
 */

const PER_BROADCAST = 60;
const TRANSACTIONAL = 30;

describe('the reputation guard pauses a project whose sends hard-bounce, across broadcasts and transactional', () => {
  let dir: string;
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let refusing = true;
  const refused: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-guard-project-'));
    sink = await startSmtpSink({
      rejectRecipient: (address) => {
        if (!refusing || !/[048]@/.test(address)) return undefined;
        refused.push(address);
        return { code: 550, message: `5.1.1 <${address}>: Recipient address rejected: User unknown` };
      },
    });
    mailroom = createMailroom({
      store: sqlStore({ url: `sqlite:${join(dir, 'mailroom.db')}` }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      worker: { ratePerSecond: 40, batchSize: 10, concurrency: 2, pollMs: 20 },
      // The project rule at test size; the broadcast rules keep their defaults (500 attempts: never met
      // here), the destination rule its own (sender-side refusals only).
      guard: { checkMs: 50, project: { hardBounceRate: 0.1, hardBounceMinSends: 40, windowSends: 80 } },
    });
  });

  afterAll(async () => {
    await mailroom?.close();
    await sink?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pauses the project within its rule, with its figures and window; resume completes, judged afresh', async () => {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const all: string[] = [];
    const refs: string[] = [];
    for (const b of ['a', 'b', 'c']) {
      const recipients = Array.from(
        { length: PER_BROADCAST },
        (_, i) => `${b}${String(i).padStart(3, '0')}@example.test`,
      );
      all.push(...recipients);
      const { ref } = await mailroom.broadcast(secret, {
        subject: 'Hi',
        sender: 'news@acme.test',
        message: '<p>Hello</p>',
        recipients: recipients.map((address) => ({ address })),
      });
      refs.push(ref);
    }
    for (let i = 0; i < TRANSACTIONAL; i++) {
      const address = `t${String(i).padStart(3, '0')}@example.test`;
      all.push(address);
      const { ref } = await mailroom.send(secret, {
        subject: 'Your receipt',
        sender: 'news@acme.test',
        message: 'Thanks',
        recipients: address,
      });
      refs.push(ref);
    }
    mailroom.worker.start();
    await waitUntil(async () => (await mailroom.listPauses(secret)).length > 0, 60_000);
    const [paused] = await mailroom.listPauses(secret);
    expect(paused).toMatchObject({ scope: 'project', by: 'guard' });
    expect(paused?.rule).toMatchObject({
      name: 'project.hard-bounces',
      signal: 'hard-bounce',
      threshold: 0.1,
      minimum: 40,
    });
    const rule = paused?.rule;
    expect(rule?.attempts).toBeGreaterThanOrEqual(40);
    expect(rule?.rate).toBeGreaterThan(0.1);
    expect(rule?.count).toBe(Math.round((rule?.rate ?? 0) * (rule?.attempts ?? 0)));
    expect(rule?.windowMs).toBeGreaterThan(0);
    expect(rule?.windowMs).toBeLessThan(10 * 60_000);
    expect(Date.parse(rule?.since ?? '')).toBeLessThanOrEqual(Date.now());

    // No broadcast crossed a rule of its own: the project is paused, no broadcast is.
    expect((await mailroom.listPauses(secret)).map((p) => p.scope)).toEqual(['project']);
    // The event carries the rule, its figures and its window.
    const events = await mailroom.listEvents(secret, { types: ['broadcast.paused'] });
    expect(events.items[0]?.data).toMatchObject({
      pause: {
        scope: 'project',
        by: 'guard',
        rule: { name: 'project.hard-bounces', windowMs: rule?.windowMs },
      },
    });

    // In flight at the pause: at most one batch; then nothing moves, of any mailing.
    await sleep(500);
    const settled = sink.messages.length + refused.length;
    await sleep(1_000);
    expect(sink.messages.length + refused.length).toBe(settled);
    expect(settled).toBeLessThan(all.length);
    // Within its rule: it paused soon after the window first crossed it (a check every 50 ms, 40 sends a
    // second, outcomes recorded within 200 ms): well under two seconds of sends past the minimum.
    expect(settled).toBeLessThan(40 + 2 * 40 + 10);

    // The list cleaned, the relay accepts; resume: all complete, and the bounces before the resume are not
    // held against the project again.
    refusing = false;
    await mailroom.resumeSending(secret);
    for (const ref of refs) {
      await waitUntil(async () => (await mailroom.getMailing(secret, ref)).status === 'completed', 60_000);
    }
    expect(await mailroom.listPauses(secret)).toEqual([]);
    const arrived = sink.messages.flatMap((m) => m.envelope.rcptTo);
    expect(new Set(arrived).size).toBe(arrived.length);
    expect(new Set(refused).size).toBe(refused.length);
    expect([...arrived, ...refused].sort()).toEqual([...all].sort());
    // The guard had time to look again after the last sends: still no pause.
    await sleep(300);
    expect(await mailroom.listPauses(secret)).toEqual([]);
  }, 120_000);
});
