import { createMailroom, type EventRecord, manualClock } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { expect, it } from 'vitest';
import { sleep, waitUntil } from './support/wait.js';

/**
 * What the project rule reads each round (issue 42): a busy project's window is its last `windowSends`
 * sends, so a round reads about that many events, not the last 10 s of them. Each worker runs its own
 * round four times a second, so on PostgreSQL with several workers these reads were a large share of the
 * database's CPU per delivery (at 900 messages a second, 9,000 events per round per worker).
 */
const T = new Date('2031-03-03T12:00:30.000Z');

it('reads about windowSends events per round at a high send rate', async () => {
  const clock = manualClock(T);
  const store = memoryStore();
  // Each round starts with the newest span, which ends at now + 1: the events read per round.
  const rounds: number[] = [];
  const count = store.countEventSeries.bind(store);
  store.countEventSeries = async (projectId, query) => {
    const rows = await count(projectId, query);
    if (query.to.getTime() === clock.now().getTime() + 1) rounds.push(0);
    rounds[rounds.length - 1] = (rounds.at(-1) ?? 0) + rows.reduce((n, row) => n + row.count, 0);
    return rows;
  };
  const mailroom = createMailroom({
    store,
    transport: memoryTransport(),
    clock,
    worker: { pollMs: 10 },
    guard: { checkMs: 20, project: { windowSends: 1_000 } },
  });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    // Other workers' sends: 5,000 in the last 10 s (500 a second), none bounced.
    const events: EventRecord[] = Array.from({ length: 5_000 }, (_, i) => {
      const id = `evt_w${String(i).padStart(6, '0')}`;
      return {
        id,
        projectId: project.id,
        type: 'email.sent',
        mailingRef: 'brd_other',
        deliveryId: null,
        address: `r${i}@example.test`,
        createdAt: new Date(T.getTime() - 1 - i * 2),
        data: { event_id: id, project_id: project.id },
      } as EventRecord;
    });
    await store.insertOutbox({ events, messages: [] });

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
    expect(rounds.length).toBeGreaterThan(0);
    // The last 2 s hold the 1,000 sends of the window (the spans grow from 1 s); 5,001 before.
    expect(Math.max(...rounds)).toBeLessThanOrEqual(1_100);
    expect(Math.min(...rounds)).toBeGreaterThanOrEqual(1_000);
    expect(await mailroom.listPauses(secret)).toEqual([]);
  } finally {
    await mailroom.close();
  }
});
