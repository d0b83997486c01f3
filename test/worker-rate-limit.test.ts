import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import { afterEach, describe, expect, it } from 'vitest';
import { type CountingSink, maxInWindow, startCountingSink } from './support/crash-sink.js';

const recipients = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ address: `${prefix}${i}@example.test`, variables: { n: i } }));

/** A broadcast to `n` recipients in batches of `size`; returns a function adding the next batch. */
async function broadcastTo(
  mailroom: Mailroom,
  secret: string,
  prefix: string,
  n: number,
  size = 250,
): Promise<() => Promise<boolean>> {
  const [first, ...rest] = chunks(recipients(prefix, n), size);
  const { ref } = await mailroom.broadcast(secret, {
    subject: 'Rate {{ n }}',
    sender: 'news@acme.test',
    message: 'Hello {{ recipient.firstName }}, number {{ n }}',
    recipients: first ?? [],
  });
  return async () => {
    const batch = rest.shift();
    if (batch) await mailroom.broadcast(secret, { broadcastRef: ref, recipients: batch });
    return rest.length > 0;
  };
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

async function project(mailroom: Mailroom, name: string): Promise<string> {
  const { project, secret } = await mailroom.admin.createProject({ name });
  await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
  return secret;
}

describe('rate limit across pooled connections (smtpTransport to a loopback sink)', () => {
  let sink: CountingSink;
  let mailroom: Mailroom | undefined;

  afterEach(async () => {
    await mailroom?.close();
    mailroom = undefined;
    await sink.close();
  });

  it('50/s for 10 s: no one-second window at the sink holds more than 50', { timeout: 30_000 }, async () => {
    sink = await startCountingSink();
    mailroom = createMailroom({
      store: memoryStore(),
      transport: smtpTransport({ host: sink.host, port: sink.port, maxConnections: 5 }),
      worker: { ratePerSecond: 50, concurrency: 8, batchSize: 100, pollMs: 20 },
    });
    const secret = await project(mailroom, 'Rate');
    // More than 10 s can carry, so the limit binds the whole time.
    const more = await broadcastTo(mailroom, secret, 'r', 700);
    while (await more()) {}
    mailroom.worker.start();
    await new Promise((r) => setTimeout(r, 10_000));
    await mailroom.worker.stop();

    const times = sink.arrivals.map((a) => a.at);
    expect(maxInWindow(times)).toBeLessThanOrEqual(50);
    // The limit paces rather than starves: well over half of 10 s × 50 went through.
    expect(times.length).toBeGreaterThan(300);
    expect(times.length).toBeLessThan(700);
  });

  it('per project: each project stays under its own limit while both send', { timeout: 30_000 }, async () => {
    sink = await startCountingSink();
    mailroom = createMailroom({
      store: memoryStore(),
      transport: smtpTransport({ host: sink.host, port: sink.port, maxConnections: 5 }),
      worker: { projectRatePerSecond: 20, concurrency: 8, batchSize: 100, pollMs: 20 },
    });
    const a = await project(mailroom, 'A');
    const b = await project(mailroom, 'B');
    // Batches of the two projects alternate, so every claim holds deliveries of both.
    const moreA = await broadcastTo(mailroom, a, 'a', 200, 20);
    const moreB = await broadcastTo(mailroom, b, 'b', 200, 20);
    for (let left = true; left; ) {
      const [leftA, leftB] = [await moreA(), await moreB()];
      left = leftA || leftB;
    }
    mailroom.worker.start();
    await new Promise((r) => setTimeout(r, 4_000));
    await mailroom.worker.stop();

    const of = (prefix: string) => sink.arrivals.filter((x) => x.rcpt.startsWith(prefix)).map((x) => x.at);
    expect(maxInWindow(of('a'))).toBeLessThanOrEqual(20);
    expect(maxInWindow(of('b'))).toBeLessThanOrEqual(20);
    // Together they exceed one project's limit: the limits are per project, not shared.
    expect(maxInWindow(sink.arrivals.map((x) => x.at))).toBeGreaterThan(20);
  });
});
