import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, type ManualClock, manualClock, workflow } from '@mailroom/core';
import { seedProfiles } from '@mailroom/core/testing';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * Automations (issue 39), the acceptance's abandoned cart, end to end: SQLite, the SMTP transport to a
 * sink on 127.0.0.1, and a clock the test moves. `cart.abandoned` -> wait 1 h -> "You left something" ->
 * wait for `order.placed` up to 24 h -> else a reminder; `order.placed` is also an exit event.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SENDER = 'shop@acme.test';

describe('the abandoned-cart workflow on SQLite, through the SMTP transport, with a controlled clock', () => {
  let clock: ManualClock;
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let secret: string;
  let workflowId: string;
  let projectId: string;

  /** What the sink got for `address`: subject and text, in arrival order. */
  const mailTo = (address: string) =>
    sink.messages
      .filter((m) => m.envelope.rcptTo.includes(address))
      .map((m) => ({ subject: m.parsed.subject, text: m.parsed.text?.trim() }));
  /** Moves the clock, runs the due steps at the new time and delivers what they sent. */
  async function tick(ms: number) {
    clock.advance(ms);
    await mailroom.automations.runDue();
    await mailroom.worker.drain();
  }
  const cart = (contact: string, id: string) =>
    mailroom.track(secret, {
      event: 'cart.abandoned',
      contact,
      id,
      properties: { item: 'Red shoes', total: 49 },
    });
  const order = (contact: string) => mailroom.track(secret, { event: 'order.placed', contact });

  beforeAll(async () => {
    clock = manualClock(new Date('2031-05-01T10:00:00.000Z'));
    sink = await startSmtpSink();
    const url = join(mkdtempSync(join(tmpdir(), 'mailroom-automations-')), 'mailroom.db');
    mailroom = createMailroom({
      store: sqlStore({ url }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      clock,
    });
    const created = await mailroom.admin.createProject({ name: 'Shop' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER, name: 'Shop' });
    await mailroom.admin.createTemplate(projectId, {
      ref: 'cart-first',
      format: 'text',
      subject: 'You left something',
      source:
        'Your {{ event.item }} ({{ event.total }} EUR) is waiting, {{ contact.first_name | default: "friend" }}.',
    });
    await mailroom.admin.createTemplate(projectId, {
      ref: 'cart-reminder',
      format: 'text',
      subject: 'Still thinking about it?',
      source: 'Last call for your {{ event.item }}.',
    });
    const created2 = await mailroom.automations.create(
      secret,
      workflow('Abandoned cart')
        .on('cart.abandoned')
        .exitOn('order.placed')
        .wait('1h', { id: 'wait-hour' })
        .send({ id: 'first', template: 'cart-first', sender: SENDER })
        .waitForEvent('order.placed', { id: 'wait-order', timeout: '24h' })
        .send({ id: 'reminder', template: 'cart-reminder', sender: SENDER })
        .build(),
    );
    workflowId = created2.id;
  });

  afterAll(async () => {
    await mailroom?.close();
    await sink?.close();
  });

  it('sends "You left something" after exactly 1 h and the reminder after 24 h more; the same event id twice starts one run', async () => {
    const a = 'ann@example.test';
    await seedProfiles(mailroom.store, projectId, [
      { address: a, name: null, traits: { first_name: 'Ann' } },
    ]);
    const first = await cart(a, 'cart-1001');
    expect(first).toMatchObject({ id: 'cart-1001', recorded: true, started: [{ workflow: workflowId }] });
    expect(await cart(a, 'cart-1001')).toEqual({ id: 'cart-1001', recorded: false, started: [] });
    await tick(0);
    await tick(59 * MINUTE);
    expect(mailTo(a)).toEqual([]);
    await tick(MINUTE);
    await sink.waitFor(1);
    expect(mailTo(a)).toEqual([
      { subject: 'You left something', text: 'Your Red shoes (49 EUR) is waiting, Ann.' },
    ]);
    await tick(24 * HOUR - MINUTE);
    expect(mailTo(a)).toHaveLength(1);
    await tick(MINUTE);
    await sink.waitFor(2);
    expect(mailTo(a)).toEqual([
      expect.objectContaining({ subject: 'You left something' }),
      { subject: 'Still thinking about it?', text: 'Last call for your Red shoes.' },
    ]);
    const runs = await mailroom.automations.runs(secret, workflowId);
    expect(runs.filter((r) => r.contact === a)).toEqual([
      expect.objectContaining({ status: 'completed', endReason: 'completed', triggerEventId: 'cart-1001' }),
    ]);
    await tick(48 * HOUR);
    expect(mailTo(a)).toHaveLength(2);
  });

  it('an order during the first wait ends the run at once: no mail at all', async () => {
    const b = 'bob@example.test';
    const { started } = await cart(b, 'cart-2001');
    await tick(30 * MINUTE);
    await order(b);
    // Woken by the event: ended now, not at its timer.
    await tick(0);
    const [run] = (await mailroom.automations.runs(secret, workflowId)).filter(
      (r) => r.id === started[0]?.run,
    );
    expect(run).toMatchObject({ status: 'exited', endReason: 'exit-event:order.placed', step: null });
    await tick(2 * HOUR);
    await tick(25 * HOUR);
    expect(mailTo(b)).toEqual([]);
  });

  it('an order during the wait for it ends the run: the first mail only, no reminder', async () => {
    const c = 'cleo@example.test';
    const before = sink.messages.length;
    const { started } = await cart(c, 'cart-3001');
    await tick(HOUR);
    await sink.waitFor(before + 1);
    await tick(3 * HOUR);
    await order(c);
    await tick(0);
    const [run] = (await mailroom.automations.runs(secret, workflowId)).filter(
      (r) => r.id === started[0]?.run,
    );
    expect(run?.status).toBe('exited');
    await tick(30 * HOUR);
    expect(mailTo(c).map((m) => m.subject)).toEqual(['You left something']);
  });

  it('counts the runs per step and by status', async () => {
    const d = 'dan@example.test';
    await cart(d, 'cart-4001');
    await tick(0);
    const view = await mailroom.automations.get(secret, workflowId);
    expect(view.runs).toEqual({ atStep: { 'wait-hour': 1 }, active: 1, completed: 1, exited: 2 });
  });
});
