/**
 * A busy main thread is not a runaway render (issue 36's send budget, found by `perf36`): the render
 * pool's watch used to judge a render thread stuck from the replies the main thread had read, so a main
 * thread held up longer than `STUCK_RENDER_MS` (a synchronous SQLite round, a GC pause, a loaded machine)
 * made it take a normal broadcast for a runaway: the whole broadcast went to the slow lane, one build at a
 * time, for a minute after each slow mark (BENCHMARKS.md, "Session 14 (`perf36`)"). The watch now reads
 * what the render thread says it is rendering, and since when.
 * Real parts: a SQLite file, the SMTP transport and the smtp-server sink, one render thread.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Logger, type Mailroom, type MailroomEvents } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

type DeliveryEvent = Parameters<MailroomEvents['delivery']>[0];

/** One request's most. */
const RECIPIENTS = 250;
/** Longer than the watch's `STUCK_RENDER_MS` (250 ms), with room. */
const BUSY_MS = 700;

/** Resolves once `check` holds (checked every 5 ms), or rejects after `timeoutMs`. */
async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the render watch and a busy main thread', () => {
  let mailroom: Mailroom;
  let sink: SmtpSink;
  const warnings: string[] = [];
  const events: DeliveryEvent[] = [];

  beforeAll(async () => {
    sink = await startSmtpSink();
    const logger: Logger = {
      debug() {},
      info() {},
      warn: (_obj, msg) => warnings.push(msg ?? ''),
      error: (_obj, msg) => warnings.push(msg ?? ''),
    };
    mailroom = createMailroom({
      store: sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-busy-main-')), 'mailroom.db') }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      worker: { pollMs: 20, renderThreads: 1 },
      logger,
    });
  }, 60_000);

  afterAll(async () => {
    await mailroom?.close();
    await sink?.close();
  });

  it("keeps a normal broadcast on the shared render thread while the main thread is held past the watch's bound", async () => {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme' });
    let held = false;
    mailroom.on('delivery', (event) => {
      events.push(event);
      if (held) return;
      held = true;
      // The main thread held while the render thread goes on through the builds posted to it: their
      // replies wait, unread, until this ends.
      const end = performance.now() + BUSY_MS;
      while (performance.now() < end) {
        // busy
      }
    });
    await mailroom.broadcast(secret, {
      subject: 'News',
      sender: 'news@acme.test',
      message: '<p>Hello {{ name | default: "there" }}, here is the news.</p>',
      recipients: Array.from({ length: RECIPIENTS }, (_, i) => ({
        address: `user${i}@example.test`,
        name: `User ${i}`,
      })),
    });
    mailroom.worker.start();
    await until(() => events.length >= RECIPIENTS, 120_000, 'every delivery');
    expect(held).toBe(true);
    expect(events.filter((e) => e.status === 'sent')).toHaveLength(RECIPIENTS);
    // No render ran long: nothing was taken for a runaway, nothing moved to the slow lane.
    expect(warnings.filter((w) => /render/.test(w))).toEqual([]);
  }, 180_000);
});
