import { createMailroom, type Mailroom, type ManualClock, manualClock, workflow } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../packages/sql/test/support/databases.js';

/**
 * Built-in triggers of automations (issue 39) on SQLite and PostgreSQL: a contact added to a group (by an
 * update-contact step, or by a signup form once confirmed), confirmed to a topic (double opt-in), and a
 * message's own events (sent, opened, clicked) as triggers for follow-ups, with the loop protection: an
 * automation's own messages start no workflow, so a workflow started by `email.sent` sends once per
 * message the app sent, never endlessly. Each read from the event outbox, written with the change.
 */

const SENDER = 'team@acme.test';

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`built-in triggers on ${kind}`, () => {
    const databases = testDatabases(kind);
    if (!databases) return;
    let clock: ManualClock;
    let transport: ReturnType<typeof memoryTransport>;
    let mailroom: Mailroom;
    let secret: string;

    const subjects = (address: string) => transport.messagesTo(address).map((m) => m.subject);
    /** Built-in events are read at the worker's poll: a few rounds let each step's events come back. */
    async function rounds(n = 4) {
      for (let i = 0; i < n; i++) {
        await mailroom.automations.runDue();
        await mailroom.worker.drain();
      }
    }

    beforeEach(async () => {
      clock = manualClock(new Date('2031-03-01T00:00:00.000Z'));
      transport = memoryTransport();
      mailroom = createMailroom({
        store: sqlStore({ url: await databases.create() }),
        transport,
        clock,
        signup: { baseUrl: 'https://mail.acme.test', secret: 'a-signup-secret-of-length' },
      });
      const created = await mailroom.admin.createProject({ name: 'Acme' });
      secret = created.secret;
      await mailroom.admin.addSender(created.project.id, { address: SENDER });
      for (const ref of ['welcome', 'vip', 'follow-up', 'confirmed']) {
        await mailroom.admin.createTemplate(created.project.id, {
          ref,
          format: 'text',
          subject: ref,
          source: 'Hello {{ event.group }}{{ event.topic }}',
        });
      }
    }, 60_000);
    afterEach(async () => {
      await mailroom.close();
    });

    it('group.added: an update-contact step adds to a group (and removes from one); the add starts a workflow once', async () => {
      await mailroom.audience.createGroup(secret, { ref: 'vips' });
      await mailroom.audience.createGroup(secret, { ref: 'trial' });
      await mailroom.automations.create(
        secret,
        workflow('Upgrade')
          .on('upgraded')
          .updateContact({ groups: { vips: true, trial: false } })
          .build(),
      );
      await mailroom.automations.create(
        secret,
        workflow('Welcome VIPs')
          .on('group.added')
          .condition({ property: 'group', op: 'equals', value: 'vips' }, { onFalse: 'end' })
          .send({ template: 'vip', sender: SENDER })
          .build(),
      );
      // In the trial group first (a send's acquiring audience).
      await mailroom.send(secret, {
        sender: SENDER,
        subject: 'Trial',
        message: 'Hi',
        recipients: 'up@x.test',
        options: { acquiringAudience: 'trial' },
      });
      await mailroom.track(secret, { event: 'upgraded', contact: 'up@x.test', id: 'u1' });
      await rounds();
      expect(subjects('up@x.test')).toEqual(['Trial', 'vip']);
      const members = async (ref: string) =>
        (await mailroom.audience.listMembers(secret, ref)).items.map((p) => p.address);
      expect(await members('vips')).toEqual(['up@x.test']);
      expect(await members('trial')).toEqual([]);
      const page = await mailroom.listEvents(secret, { types: ['contact.groups_changed'] });
      expect(page.items.map((e) => e.data.groups)).toEqual([
        [
          { ref: 'vips', member: true },
          { ref: 'trial', member: false },
        ],
      ]);
      await rounds();
      expect(subjects('up@x.test')).toEqual(['Trial', 'vip']);
    });

    it('group.added and topic.confirmed: a double opt-in signup starts them when confirmed, not before', async () => {
      await mailroom.audience.createGroup(secret, { ref: 'readers' });
      await mailroom.topics.create(secret, { key: 'news', name: 'News', doubleOptIn: true });
      const form = await mailroom.forms.create(secret, {
        name: 'Newsletter',
        group: 'readers',
        topic: 'news',
        consentText: 'I agree',
        sender: SENDER,
      });
      await mailroom.automations.create(
        secret,
        workflow('Joined').on('group.added').send({ template: 'welcome', sender: SENDER }).build(),
      );
      await mailroom.automations.create(
        secret,
        workflow('Confirmed').on('topic.confirmed').send({ template: 'confirmed', sender: SENDER }).build(),
      );
      await mailroom.signups.submit(form.ref, { email: 'reader@x.test' });
      await mailroom.signups.settled();
      await rounds();
      // Only the confirmation request so far.
      const [request] = transport.messagesTo('reader@x.test');
      expect(transport.messagesTo('reader@x.test')).toHaveLength(1);
      const token = /\/confirm\/([A-Za-z0-9._~-]+)/.exec(request?.text ?? '')?.[1];
      expect(token).toBeDefined();
      await mailroom.signups.confirm(token as string);
      await rounds();
      expect(subjects('reader@x.test').slice(1).sort()).toEqual(['confirmed', 'welcome']);
      const bodies = transport.messagesTo('reader@x.test').map((m) => m.text);
      expect(bodies).toContain('Hello readers');
      expect(bodies).toContain('Hello news');
    });

    it('message events start follow-ups for the app’s messages; an automation’s own messages start none', async () => {
      await mailroom.automations.create(
        secret,
        workflow('After each mail').on('email.sent').send({ template: 'follow-up', sender: SENDER }).build(),
      );
      await mailroom.send(secret, {
        sender: SENDER,
        subject: 'Receipt',
        message: 'Thanks',
        recipients: 'f@x.test',
      });
      await mailroom.worker.drain();
      await rounds(6);
      // The receipt's email.sent started one run; its follow-up's email.sent started none.
      expect(subjects('f@x.test')).toEqual(['Receipt', 'follow-up']);
      const [flow] = await mailroom.automations.list(secret);
      expect(await mailroom.automations.runs(secret, flow?.id ?? '')).toHaveLength(1);
      clock.advance(60_000);
      await rounds(4);
      expect(subjects('f@x.test')).toEqual(['Receipt', 'follow-up']);
    });
  });
}
