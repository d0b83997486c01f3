import type { MailingProgress, Mailroom, MailroomEvents, SourcePageEvent } from '@mailroom/core';
import { createMailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * The engine's events that an embedding app (and the metrics) subscribe to: `delivery` with its send
 * latency, `broadcast:progress` throttled per mailing and ending on the final counts, `broadcast:completed`
 * once per mailing, and `source:page` for each expanded page of a source.
 */

type DeliveryEvent = Parameters<MailroomEvents['delivery']>[0];

const SENDER = 'news@acme.test';
const INTERVAL_MS = 150;

describe('engine events', () => {
  let mailroom: Mailroom | undefined;

  afterEach(async () => {
    await mailroom?.close();
    mailroom = undefined;
  });

  async function setup(options: { delayMs?: number } = {}) {
    const engine = createMailroom({
      store: memoryStore(),
      transport: memoryTransport({ delayMs: options.delayMs ?? 0 }),
      progressIntervalMs: INTERVAL_MS,
      worker: { concurrency: 1, flushMs: 20, pollMs: 20 },
    });
    mailroom = engine;
    const { project, secret } = await engine.admin.createProject({ name: 'Acme' });
    await engine.admin.addSender(project.id, { address: SENDER });
    return { engine, project, secret };
  }

  it('delivery: one event per outcome, with the latency of the send (null when nothing was sent)', async () => {
    const { engine, project, secret } = await setup({ delayMs: 15 });
    await engine.admin.suppress(project.id, 'blocked@example.test', 'manual');
    const events: DeliveryEvent[] = [];
    engine.on('delivery', (e) => events.push(e));
    const { ref } = await engine.broadcast(secret, {
      subject: 'Hi',
      sender: SENDER,
      message: 'Hello',
      recipients: ['ok@example.test', 'blocked@example.test'],
    });
    await engine.worker.drain();
    expect(events).toHaveLength(2);
    const sent = events.find((e) => e.address === 'ok@example.test');
    expect(sent).toMatchObject({
      projectId: project.id,
      mailingRef: ref,
      kind: 'broadcast',
      status: 'sent',
      attempts: 1,
      response: '250 OK (memory)',
      error: null,
    });
    expect(sent?.latencyMs).toBeGreaterThanOrEqual(14);
    expect(sent?.latencyMs).toBeLessThan(5_000);
    expect(events.find((e) => e.address === 'blocked@example.test')).toMatchObject({
      status: 'suppressed',
      latencyMs: null,
    });
  });

  it('broadcast:progress: at most once per interval per mailing, ending on the final counts', async () => {
    const { engine, secret } = await setup({ delayMs: 8 });
    const seen: Array<{ at: number; progress: MailingProgress }> = [];
    const completed: string[] = [];
    // Subscribed after the engine exists: the reporter starts following outcomes only now.
    engine.on('broadcast:progress', (progress) => seen.push({ at: performance.now(), progress }));
    engine.on('broadcast:completed', (e) => completed.push(e.ref));
    const { ref } = await engine.broadcast(secret, {
      subject: 'News',
      sender: SENDER,
      message: 'Hello',
      recipients: Array.from({ length: 100 }, (_, i) => `r${i}@example.test`),
    });
    engine.worker.start();
    await vi.waitFor(() => expect(completed).toEqual([ref]), { timeout: 10_000, interval: 20 });
    await vi.waitFor(() => expect(seen.at(-1)?.progress.status).toBe('completed'), { timeout: 2_000 });

    const mine = seen.filter((s) => s.progress.ref === ref);
    expect(mine.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < mine.length; i++) {
      const gap = (mine[i]?.at ?? 0) - (mine[i - 1]?.at ?? 0);
      expect(gap, `gap before event ${i}`).toBeGreaterThanOrEqual(INTERVAL_MS - 5);
      expect(mine[i]?.progress.done).toBeGreaterThanOrEqual(mine[i - 1]?.progress.done ?? 0);
    }
    expect(mine[0]?.progress.done).toBeLessThan(100);
    expect(mine.at(-1)?.progress).toMatchObject({
      kind: 'broadcast',
      status: 'completed',
      total: 100,
      done: 100,
      counts: {
        sent: 100,
        queued: 0,
        sending: 0,
        failed: 0,
        suppressed: 0,
        skipped: 0,
        bounced: 0,
        complained: 0,
      },
    });
    // Nothing more once it is over.
    const count = seen.length;
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 2));
    expect(seen).toHaveLength(count);
  });

  it('broadcast:completed: once per mailing, for broadcasts and messages, and a listener can leave', async () => {
    const { engine, secret } = await setup();
    const completed: Array<{ ref: string; kind: string }> = [];
    const off = engine.on('broadcast:completed', (e) => completed.push({ ref: e.ref, kind: e.kind }));
    const broadcast = await engine.broadcast(secret, {
      subject: 'B',
      sender: SENDER,
      message: 'x',
      recipients: ['a@example.test', 'b@example.test'],
    });
    const message = await engine.send(secret, {
      subject: 'M',
      sender: SENDER,
      message: 'x',
      recipients: ['c@example.test'],
    });
    await engine.worker.drain();
    expect(completed).toEqual(
      expect.arrayContaining([
        { ref: broadcast.ref, kind: 'broadcast' },
        { ref: message.ref, kind: 'message' },
      ]),
    );
    expect(completed).toHaveLength(2);
    off();
    await engine.send(secret, {
      subject: 'M2',
      sender: SENDER,
      message: 'x',
      recipients: ['d@example.test'],
    });
    await engine.worker.drain();
    expect(completed).toHaveLength(2);
  });

  it('source:page: each committed page of a source, with its rows', async () => {
    const { engine, project, secret } = await setup();
    await engine.admin.createAudienceGroup(project.id, { ref: 'fans' });
    await engine.broadcast(secret, {
      subject: 'Join',
      sender: SENDER,
      message: 'x',
      recipients: Array.from({ length: 30 }, (_, i) => `fan${i}@example.test`),
      options: { acquiringAudience: 'fans' },
    });
    await engine.worker.drain();
    const pages: SourcePageEvent[] = [];
    engine.on('source:page', (e) => pages.push(e));
    const { ref } = await engine.broadcast(secret, {
      subject: 'To fans',
      sender: SENDER,
      message: 'x',
      sources: [{ ref: 'fans' }],
    });
    await engine.worker.drain();
    expect(pages.length).toBeGreaterThanOrEqual(1);
    expect(
      pages.every((p) => p.mailingRef === ref && p.kind === 'audience' && p.projectId === project.id),
    ).toBe(true);
    expect(pages.reduce((sum, p) => sum + p.rows, 0)).toBe(30);
    expect(pages.reduce((sum, p) => sum + p.failedRows, 0)).toBe(0);
    expect(pages.at(-1)?.status).toBe('done');
    expect((await engine.getMailing(secret, ref)).counts.sent).toBe(30);
  });
});
