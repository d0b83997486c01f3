import { createMailroom, type EventRecord, manualClock } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { expect, it } from 'vitest';
import { sleep, waitUntil } from './support/wait.js';

/**
 * The project rule's window, with a clock the test controls and events written to the store as other
 * workers would write them: it counts the project's LAST sends (not the hard bounces of three hours ago,
 * once newer sends fill the window), every worker's (none of these events is this process's), and after a
 * resume only what came after it.
 */
const T = new Date('2031-03-03T12:00:30.000Z');
const MINUTE = 60_000;

it('judges the last sends of every worker, and after a resume only the sends after it', async () => {
  const clock = manualClock(T);
  const store = memoryStore();
  const mailroom = createMailroom({
    store,
    transport: memoryTransport(),
    clock,
    worker: { pollMs: 10 },
    guard: { checkMs: 20, project: { hardBounceRate: 0.05, hardBounceMinSends: 50, windowSends: 100 } },
  });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    let n = 0;
    const events = (count: number, at: Date, type: 'email.sent' | 'email.bounced'): EventRecord[] =>
      Array.from({ length: count }, () => {
        const id = `evt_w${String(n++).padStart(6, '0')}`;
        return {
          id,
          projectId: project.id,
          type,
          mailingRef: 'brd_other',
          deliveryId: null,
          address: `r${n}@example.test`,
          createdAt: at,
          data: {
            event_id: id,
            project_id: project.id,
            ...(type === 'email.bounced'
              ? {
                  bounce: {
                    reason: 'userunknown',
                    class: 'recipient-hard',
                    status: '5.1.1',
                    diagnostic: null,
                    source: 'smtp',
                  },
                }
              : {}),
          },
        } as EventRecord;
      });
    const write = (list: EventRecord[]) => store.insertOutbox({ events: list, messages: [] });
    const ago = (ms: number) => new Date(T.getTime() - ms);
    // Another worker's sends: a bad list three hours ago, then 100 clean sends half an hour ago.
    await write(events(100, ago(3 * 60 * MINUTE), 'email.bounced'));
    await write(events(100, ago(30 * MINUTE), 'email.sent'));

    // This process sends one message, so its guard watches the project.
    mailroom.worker.start();
    const { ref } = await mailroom.send(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: 'x',
      recipients: 'a@example.test',
    });
    await waitUntil(async () => (await mailroom.getMailing(secret, ref)).status === 'completed');
    await sleep(300);
    // The last 101 sends are clean: the bounces of three hours ago are out of the window.
    expect(await mailroom.listPauses(secret)).toEqual([]);

    // A minute ago, 10 hard bounces: 10 of the last 111 sends (9 %), over 5 %.
    await write(events(10, ago(MINUTE), 'email.bounced'));
    await waitUntil(async () => (await mailroom.listPauses(secret)).length > 0);
    const [paused] = await mailroom.listPauses(secret);
    expect(paused).toMatchObject({ scope: 'project', by: 'guard' });
    const windowStart = ago(30 * MINUTE).getTime() - (ago(30 * MINUTE).getTime() % MINUTE);
    expect(paused?.rule).toEqual({
      name: 'project.hard-bounces',
      signal: 'hard-bounce',
      count: 10,
      attempts: 111,
      rate: 10 / 111,
      threshold: 0.05,
      minimum: 50,
      windowMs: T.getTime() - windowStart,
      since: new Date(windowStart).toISOString(),
    });

    // Resumed: what came before does not pause it again.
    await mailroom.resumeSending(secret);
    await sleep(300);
    expect(await mailroom.listPauses(secret)).toEqual([]);
    // Two minutes on, 60 sends that all hard-bounce: judged on those alone (60 of 60).
    clock.advance(2 * MINUTE);
    await write(events(60, clock.now(), 'email.bounced'));
    await waitUntil(async () => (await mailroom.listPauses(secret)).length > 0);
    expect((await mailroom.listPauses(secret))[0]?.rule).toMatchObject({ count: 60, attempts: 60, rate: 1 });
  } finally {
    await mailroom.close();
  }
});
