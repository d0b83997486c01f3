import {
  createMailroom,
  type Mailroom,
  type ManualClock,
  manualClock,
  type Store,
  workflow,
} from '@mailroom/core';
import { seedProfiles } from '@mailroom/core/testing';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * Automations (issue 39) in the engine on the memory store: re-entry rules, versions, conditions, pause
 * and resume, deletion, the send path's rules, and a crash after a send (the step repeats, the message
 * does not).
 */

const HOUR = 3_600_000;
const SENDER = 'team@acme.test';

describe('automations in the engine', () => {
  let clock: ManualClock;
  let transport: ReturnType<typeof memoryTransport>;
  let store: Store;
  let mailroom: Mailroom;
  let secret: string;
  let projectId: string;
  /** When set, `advanceRun` throws while this returns true (a process dying before it wrote the step). */
  let crash: ((advance: { step: string | null }) => boolean) | undefined;
  /** Calls of the store's idempotency keys (`beginIdempotent`, `finishIdempotent`). */
  let keyCalls = 0;
  /** When set, the named store call dies (throws) `before` or `after` it did its work, while it returns true. */
  let dies: { call: 'beginIdempotent' | 'commitBatch' | 'finishIdempotent'; after: boolean } | undefined;

  const subjects = (address: string) => transport.messagesTo(address).map((m) => m.subject);
  async function tick(ms: number) {
    clock.advance(ms);
    await mailroom.automations.runDue();
    await mailroom.worker.drain();
  }
  const track = (event: string, contact: string, id?: string, properties?: Record<string, unknown>) =>
    mailroom.track(secret, { event, contact, ...(id ? { id } : {}), ...(properties ? { properties } : {}) });

  beforeEach(async () => {
    clock = manualClock(new Date('2031-01-01T00:00:00.000Z'));
    transport = memoryTransport();
    const inner = memoryStore();
    crash = undefined;
    dies = undefined;
    keyCalls = 0;
    const dying =
      <A extends unknown[], R>(call: NonNullable<typeof dies>['call'], real: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        if (call !== 'commitBatch') keyCalls++;
        const now = dies?.call === call ? dies : undefined;
        if (now && !now.after) throw new Error('the worker died');
        const result = await real(...args);
        if (now?.after) throw new Error('the worker died');
        return result;
      };
    store = {
      ...inner,
      beginIdempotent: dying('beginIdempotent', inner.beginIdempotent),
      commitBatch: dying('commitBatch', inner.commitBatch),
      finishIdempotent: dying('finishIdempotent', inner.finishIdempotent),
      advanceRun: (id, token, advance, options, outbox) => {
        if (crash?.(advance)) return Promise.reject(new Error('the worker died'));
        return inner.advanceRun(id, token, advance, options, outbox);
      },
    };
    mailroom = createMailroom({ store, transport, clock, automations: { leaseMs: 60_000 } });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
    for (const ref of ['welcome', 'tips', 'pro', 'free']) {
      await mailroom.admin.createTemplate(projectId, {
        ref,
        format: 'text',
        subject: ref,
        source: `{{ event.n }}`,
      });
    }
  });
  afterEach(async () => {
    await mailroom.close();
  });

  const welcome = (reentry: 'once' | 'one-at-a-time' | 'every-time') =>
    workflow('Welcome')
      .on('signup')
      .reentry(reentry)
      .send({ template: 'welcome', sender: SENDER })
      .wait('1d')
      .send({ template: 'tips', sender: SENDER })
      .build();

  it('every time: one run per triggering event id; once: one run ever; one at a time: not while one runs', async () => {
    const every = await mailroom.automations.create(secret, welcome('every-time'));
    expect((await track('signup', 'a@x.test', 'e1')).started).toHaveLength(1);
    expect((await track('signup', 'a@x.test', 'e1')).recorded).toBe(false);
    expect((await track('signup', 'a@x.test', 'e2')).started).toHaveLength(1);
    await mailroom.automations.delete(secret, every.id);

    const once = await mailroom.automations.create(secret, welcome('once'));
    expect((await track('signup', 'b@x.test')).started).toHaveLength(1);
    await tick(0);
    await tick(86_400_000);
    expect(subjects('b@x.test')).toEqual(['welcome', 'tips']);
    expect((await track('signup', 'b@x.test')).started).toEqual([]);
    await mailroom.automations.delete(secret, once.id);

    const one = await mailroom.automations.create(secret, welcome('one-at-a-time'));
    expect((await track('signup', 'c@x.test')).started).toHaveLength(1);
    expect((await track('signup', 'c@x.test')).started).toEqual([]);
    await tick(0);
    await tick(86_400_000);
    expect((await track('signup', 'c@x.test')).started.map((s) => s.workflow)).toEqual([one.id]);
  });

  it('branches on traits and event properties; runs keep the version they started on', async () => {
    const definition = (template: string) =>
      workflow('Plan')
        .on('upgraded')
        .condition({ trait: 'plan', op: 'equals', value: 'pro' }, { onFalse: 'free-step' })
        .send({ template, sender: SENDER, next: 'end' })
        .send({ id: 'free-step', template: 'free', sender: SENDER })
        .build();
    const created = await mailroom.automations.create(secret, {
      ...definition('pro'),
      steps: [{ type: 'wait', duration: '1h' }, ...definition('pro').steps],
    });
    await seedProfiles(store, projectId, [{ address: 'pro@x.test', traits: { plan: 'pro' } }]);
    await track('upgraded', 'pro@x.test', undefined, { n: 1 });
    await track('upgraded', 'nobody@x.test');
    await tick(0);
    // A new version while both runs wait: they finish on version 1, a new run takes version 2.
    const v2 = await mailroom.automations.update(secret, created.id, definition('tips'));
    expect(v2.version).toBe(2);
    await track('upgraded', 'pro@x.test', 'later');
    await tick(HOUR);
    expect(subjects('pro@x.test').sort()).toEqual(['pro', 'tips']);
    expect(subjects('nobody@x.test')).toEqual(['free']);
    const runs = await mailroom.automations.runs(secret, created.id);
    expect(runs.map((r) => r.version).sort()).toEqual([1, 1, 2]);
  });

  it('a paused workflow starts no run and its due steps wait; resumed, they run once; deleted, its runs end', async () => {
    const created = await mailroom.automations.create(secret, welcome('every-time'));
    await track('signup', 'p@x.test');
    await tick(0);
    expect(subjects('p@x.test')).toEqual(['welcome']);
    await mailroom.automations.pause(secret, created.id);
    expect((await track('signup', 'q@x.test')).started).toEqual([]);
    await tick(2 * 86_400_000);
    expect(subjects('p@x.test')).toEqual(['welcome']);
    expect((await mailroom.automations.resume(secret, created.id)).status).toBe('active');
    await tick(0);
    await tick(0);
    expect(subjects('p@x.test')).toEqual(['welcome', 'tips']);

    await track('signup', 'r@x.test');
    await tick(0);
    await mailroom.automations.delete(secret, created.id);
    await tick(0);
    await expect(mailroom.automations.get(secret, created.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const run = (await store.listRuns(projectId, created.id, { limit: 10 })).find(
      (r) => r.contact === 'r@x.test',
    );
    expect(run).toMatchObject({ status: 'exited', endReason: 'workflow-deleted' });
    await tick(2 * 86_400_000);
    expect(subjects('r@x.test')).toEqual(['welcome']);
  });

  it('a worker dying after a send repeats the step after its lease, and the message is not sent twice', async () => {
    await mailroom.automations.create(secret, welcome('every-time'));
    await track('signup', 'k@x.test', 'k1', { n: 7 });
    // The process dies after the send, before it wrote the next step.
    crash = () => true;
    await tick(0);
    expect(subjects('k@x.test')).toEqual(['welcome']);
    crash = undefined;
    // Within the lease nobody takes the run; after it, another worker repeats the step in flight.
    await tick(30_000);
    await tick(31_000);
    await tick(86_400_000);
    expect(subjects('k@x.test')).toEqual(['welcome', 'tips']);
  });

  it('a send step is made once by its message ref alone: no idempotency key is written or finished', async () => {
    await mailroom.automations.create(secret, welcome('every-time'));
    await track('signup', 'r@x.test', 'r1', { n: 3 });
    keyCalls = 0;
    await tick(0);
    await tick(86_400_000);
    expect(subjects('r@x.test')).toEqual(['welcome', 'tips']);
    expect(keyCalls).toBe(0);
  });

  describe('a worker dying inside a send step: the message is sent exactly once', () => {
    /** Dies at `call`, and before it writes the run's next place; then another worker, after the lease. */
    async function dieThenRecover(call: NonNullable<typeof dies>['call'], after: boolean) {
      await mailroom.automations.create(secret, welcome('every-time'));
      await track('signup', 'd@x.test', 'd1', { n: 1 });
      dies = { call, after };
      crash = () => true;
      await tick(0);
      dies = undefined;
      crash = undefined;
      await tick(61_000);
      expect(subjects('d@x.test')).toEqual(['welcome']);
      await tick(86_400_000);
      expect(subjects('d@x.test')).toEqual(['welcome', 'tips']);
      const [flow] = await mailroom.automations.list(secret);
      const [run] = await mailroom.automations.runs(secret, flow?.id ?? '');
      expect(run).toMatchObject({ status: 'completed' });
    }

    it('after the key was written, before the message: the message is sent on recovery', async () => {
      await dieThenRecover('beginIdempotent', true);
    });
    it('after the message committed, before its key was finished: not sent again', async () => {
      await dieThenRecover('finishIdempotent', false);
    });
    it('after the message committed but reported as failed (its key dropped): not sent again', async () => {
      await dieThenRecover('commitBatch', true);
    });
    it('before the message committed (its key dropped): sent on recovery', async () => {
      await dieThenRecover('commitBatch', false);
    });
  });

  it('the send path applies: a suppressed contact gets nothing; an unknown template is refused with its path', async () => {
    const created = await mailroom.automations.create(secret, welcome('every-time'));
    await mailroom.suppressions.add(secret, { address: 's@x.test' });
    await track('signup', 's@x.test');
    await tick(0);
    expect(subjects('s@x.test')).toEqual([]);
    await expect(
      mailroom.automations.create(secret, {
        name: 'Bad',
        trigger: { event: 'x' },
        steps: [{ type: 'send', template: 'nope', sender: SENDER }],
      }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: ['steps', 0, 'template'], message: 'No template nope', code: 'custom' }],
    });
    expect((await mailroom.automations.list(secret)).map((w) => w.id)).toEqual([created.id]);
  });

  it('writes automation.run_started, run_completed and run_exited events with the run, for webhooks and GET /events', async () => {
    const created = await mailroom.automations.create(
      secret,
      workflow('Nudge')
        .on('signup')
        .exitOn('churned')
        .wait('1h')
        .send({ template: 'welcome', sender: SENDER })
        .build(),
    );
    const done = await track('signup', 'ev1@x.test', 'sig-1');
    const left = await track('signup', 'ev2@x.test', 'sig-2');
    await tick(0);
    await track('churned', 'ev2@x.test');
    await tick(HOUR);
    const types = ['automation.run_started', 'automation.run_completed', 'automation.run_exited'] as const;
    const page = await mailroom.listEvents(secret, { types: [...types] });
    const seen = page.items.map((e) => [e.type, e.data.address, e.data.automation?.reason ?? null]).sort();
    expect(seen).toEqual(
      [
        ['automation.run_started', 'ev1@x.test', null],
        ['automation.run_started', 'ev2@x.test', null],
        ['automation.run_completed', 'ev1@x.test', 'completed'],
        ['automation.run_exited', 'ev2@x.test', 'exit-event:churned'],
      ].sort(),
    );
    const started = page.items.find(
      (e) => e.type === 'automation.run_started' && e.data.address === 'ev1@x.test',
    );
    expect(started?.data.automation).toEqual({
      workflow_id: created.id,
      run_id: done.started[0]?.run,
      version: 1,
      trigger_event_id: 'sig-1',
    });
    expect(left.started).toHaveLength(1);
  });

  it('waits until a time of day in the contact’s zone (its timezone trait, else UTC)', async () => {
    // The clock starts at 2031-01-01 00:00 UTC: 09:00 in Tokyo.
    await mailroom.automations.create(
      secret,
      workflow('Morning').on('signup').waitUntil('10:00').send({ template: 'tips', sender: SENDER }).build(),
    );
    await seedProfiles(store, projectId, [
      { address: 'tokyo@x.test', traits: { timezone: 'Asia/Tokyo' } },
      { address: 'mars@x.test', traits: { timezone: 'Mars/Base' } },
    ]);
    for (const contact of ['tokyo@x.test', 'mars@x.test', 'none@x.test']) await track('signup', contact);
    await tick(0);
    await tick(HOUR - 60_000);
    expect(subjects('tokyo@x.test')).toEqual([]);
    await tick(60_000);
    expect(subjects('tokyo@x.test')).toEqual(['tips']);
    await tick(9 * HOUR - 60_000);
    expect([...subjects('mars@x.test'), ...subjects('none@x.test')]).toEqual([]);
    await tick(60_000);
    expect([...subjects('mars@x.test'), ...subjects('none@x.test')]).toEqual(['tips', 'tips']);
  });

  it('built-in events: topic.subscribed starts a run; a run waits for its message’s email.sent; a message event may be a trigger', async () => {
    await mailroom.topics.create(secret, { key: 'news', name: 'News' });
    await mailroom.automations.create(
      secret,
      workflow('Subscribed')
        .on('topic.subscribed')
        .condition({ property: 'topic', op: 'equals', value: 'news' }, { onFalse: 'end' })
        .send({ template: 'welcome', sender: SENDER })
        .waitForEvent('email.sent', { timeout: '1d', onEvent: 'after-sent', onTimeout: 'end' })
        .send({ id: 'after-sent', template: 'tips', sender: SENDER })
        .build(),
    );
    await mailroom.topics.setContactTopics(secret, 'n@x.test', { news: 'subscribed' });
    await tick(0);
    expect(subjects('n@x.test')).toEqual(['welcome']);
    // The welcome's email.sent is in the outbox now: the waiting run goes on.
    await tick(0);
    await tick(0);
    expect(subjects('n@x.test')).toEqual(['welcome', 'tips']);
    await tick(86_400_000);
    expect(subjects('n@x.test')).toEqual(['welcome', 'tips']);
    // A message event starts workflows now (test/automations-builtin-triggers.test.ts): not on an automation's messages.
    expect(
      (await mailroom.automations.create(secret, workflow('Follow').on('email.opened').wait('1h').build()))
        .trigger,
    ).toBe('email.opened');
  });

  it('erasing a contact removes its tracked events and runs: nothing more is sent to it', async () => {
    const created = await mailroom.automations.create(secret, welcome('every-time'));
    await track('signup', 'gone@x.test', 'g1', { n: 1 });
    await tick(0);
    expect(subjects('gone@x.test')).toEqual(['welcome']);
    await mailroom.audience.eraseProfile(secret, 'gone@x.test');
    expect(await mailroom.automations.runs(secret, created.id)).toEqual([]);
    await tick(2 * 86_400_000);
    expect(subjects('gone@x.test')).toEqual(['welcome']);
  });

  it('branches on whether an earlier step’s message was opened by a person (machine opens do not count)', async () => {
    const created = await mailroom.automations.create(
      secret,
      workflow('Follow-up')
        .on('signup')
        .send({ id: 'hello', template: 'welcome', sender: SENDER })
        .wait('1d')
        .condition({ message: 'hello', op: 'opened' }, { onTrue: 'end' })
        .send({ template: 'tips', sender: SENDER })
        .build(),
    );
    await track('signup', 'opens@x.test');
    await track('signup', 'proxy@x.test');
    await tick(0);
    const runs = await store.listRuns(projectId, created.id, { limit: 10 });
    const refOf = (contact: string) => {
      const ref = runs.find((r) => r.contact === contact)?.sent.hello;
      if (!ref) throw new Error(`no message for ${contact}`);
      return ref;
    };
    const opened = (contact: string, machine: boolean) =>
      store.insertOutbox({
        events: [
          {
            id: `evt_${Date.now().toString(36)}${contact}`,
            projectId,
            type: 'email.opened',
            mailingRef: refOf(contact),
            deliveryId: null,
            address: contact,
            data: { event_id: 'x', project_id: projectId, machine },
            createdAt: clock.now(),
          },
        ],
        messages: [],
      });
    await opened('opens@x.test', false);
    await opened('proxy@x.test', true);
    await tick(86_400_000);
    expect(subjects('opens@x.test')).toEqual(['welcome']);
    expect(subjects('proxy@x.test')).toEqual(['welcome', 'tips']);
    await expect(
      mailroom.automations.create(secret, {
        name: 'Bad',
        trigger: { event: 'x' },
        steps: [
          { type: 'wait', id: 'w', duration: '1h' },
          { type: 'condition', if: { message: 'w', op: 'clicked' } },
        ],
      }),
    ).rejects.toMatchObject({
      issues: [{ path: ['steps', 1, 'if', 'message'], message: 'No send step "w"', code: 'custom' }],
    });
  });

  it('an update-contact step merges traits and sets topic states as a consent change of source automation', async () => {
    await mailroom.topics.create(secret, { key: 'onboarding', name: 'Onboarding' });
    await mailroom.automations.create(
      secret,
      workflow('Tag')
        .on('signup')
        .updateContact({ traits: { stage: 'trial', old: null }, topics: { onboarding: 'subscribed' } })
        .condition({ trait: 'stage', op: 'equals', value: 'trial' }, { onFalse: 'end' })
        .send({ template: 'welcome', sender: SENDER })
        .build(),
    );
    await seedProfiles(store, projectId, [{ address: 'u@x.test', traits: { old: 1, keep: 'y' } }]);
    await track('signup', 'u@x.test');
    await track('signup', 'new@x.test');
    await tick(0);
    expect((await store.getProfile(projectId, 'u@x.test'))?.traits).toEqual({ keep: 'y', stage: 'trial' });
    expect((await store.getProfile(projectId, 'new@x.test'))?.traits).toEqual({ stage: 'trial' });
    expect(subjects('u@x.test')).toEqual(['welcome']);
    const states = await mailroom.topics.contactTopics(secret, 'new@x.test');
    expect(states).toEqual([
      expect.objectContaining({ key: 'onboarding', state: 'subscribed', explicit: true }),
    ]);
    const history = await mailroom.topics.history(secret, 'new@x.test');
    expect(history.data.map((r) => r.source)).toEqual(['automation']);
    await expect(
      mailroom.automations.create(
        secret,
        workflow('Bad')
          .on('x')
          .updateContact({ topics: { nope: 'subscribed' } })
          .build(),
      ),
    ).rejects.toMatchObject({
      issues: [{ path: ['steps', 0, 'topics', 'nope'], message: 'No topic nope', code: 'custom' }],
    });
  });
});
