import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, SENDER_BLOCK_HELD, type Store } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { describe, expect, it } from 'vitest';
import { missingServerTest, testServer } from '../packages/sql/test/support/servers.js';
import { pgTestSchema } from './support/pg-admin.js';
import { type PolicyBlockRelay, startPolicyBlockRelay } from './support/policy-block-relay.js';
import { sleep, waitUntil } from './support/wait.js';

/**
 * Issue 35, "a sender-side block never retried to the same destination until it is resumed": a relay on
 * 127.0.0.1 accepts the first 20 recipients, then refuses every one with `550 5.7.1 ... policy block`.
 * Each refused delivery is held (queued, not failed, the address not suppressed) behind the guard's pause
 * of the destination; nothing is tried again while it is paused (the relay's count stays flat); once the
 * block is lifted and the operator resumes the destination, every held delivery is sent, each once.
 */

const RECIPIENTS = 200;
const ACCEPT_FIRST = 20;
const DAY = 86_400_000;
const PG = await testServer('postgres');

/** Resolves once the relay has seen no new recipient for a second (what was in flight has ended). */
async function settled(relay: PolicyBlockRelay): Promise<number> {
  let last = -1;
  let since = Date.now();
  await waitUntil(() => {
    if (relay.tried !== last) {
      last = relay.tried;
      since = Date.now();
      return false;
    }
    return Date.now() - since >= 1_000;
  }, 60_000);
  return relay.tried;
}

async function holdsUntilResumed(store: Store): Promise<void> {
  const relay = await startPolicyBlockRelay(ACCEPT_FIRST);
  const mailroom = createMailroom({
    store,
    transport: smtpTransport({ host: relay.host, port: relay.port }),
    // The destination rule pauses (10 refusals); the broadcast rule is out of the way.
    guard: { broadcast: { senderSideMin: 1_000_000 } },
  });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const addresses = Array.from({ length: RECIPIENTS }, (_, i) => `r${i}@example.test`);
    const { ref } = await mailroom.broadcast(secret, {
      sender: 'news@acme.test',
      subject: 'News',
      message: 'Hello',
      recipients: addresses,
    });
    const mailing = await store.getMailing(project.id, ref);
    if (!mailing) throw new Error('mailing not found');
    mailroom.worker.start();
    await waitUntil(async () => (await store.listPauses({ now: new Date() })).length > 0, 30_000);
    const tried = await settled(relay);
    expect(relay.refused).toBeGreaterThan(0);

    // Every refusal held: queued until its hold's deadline (3 days on), none failed, none suppressed.
    const deliveries = await store.listDeliveries(mailing.id, { limit: RECIPIENTS + 1 });
    expect(deliveries.filter((d) => d.status !== 'queued' && d.status !== 'sent')).toEqual([]);
    const held = deliveries.filter((d) => d.lastError?.endsWith(SENDER_BLOCK_HELD));
    expect(held).toHaveLength(relay.refused);
    for (const d of held) {
      expect(d.status).toBe('queued');
      expect(d.lastResponse).toMatch(/550 5\.7\.1/);
      expect(d.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 2 * DAY);
    }
    expect(await store.findSuppressed(project.id, addresses)).toEqual([]);
    const [pause] = await store.listPauses({ projectId: project.id, now: new Date() });
    expect(pause).toMatchObject({ scope: 'destination', domains: ['example.test'], by: 'guard' });
    const bounced = await store.listEvents(project.id, { types: ['email.bounced'] }, { limit: 1_000 });
    expect(bounced).toHaveLength(relay.refused);
    expect(await store.listEvents(project.id, { types: ['email.failed'] }, { limit: 10 })).toEqual([]);

    // Nothing is tried while paused: a span of time with no new recipient is the only way to see it
    // (the worker polls and the guard reads the store several times within it).
    await sleep(2_000);
    expect(relay.tried).toBe(tried);

    // The block is lifted and the operator resumes the destination: every held delivery goes, once.
    relay.acceptAll();
    await mailroom.resumeDestination(secret, 'example.test');
    await waitUntil(async () => (await store.countDeliveries(mailing.id)).sent === RECIPIENTS, 60_000, {
      what: () => `relay: ${relay.accepted} accepted, ${relay.refused} refused`,
    }).catch(async (error: unknown) => {
      const left = await store.listDeliveries(mailing.id, { limit: 3, status: 'queued' });
      console.log(await store.countDeliveries(mailing.id), left, await store.listPauses({ now: new Date() }));
      throw error;
    });
    expect(relay.accepted).toBe(RECIPIENTS);
    expect(await store.findSuppressed(project.id, addresses)).toEqual([]);
  } finally {
    await mailroom.close();
    await relay.close();
  }
}

describe('a sender-side block is held until the destination is resumed (relay on 127.0.0.1)', () => {
  it('SQLite', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-sender-block-'));
    try {
      await holdsUntilResumed(sqlStore({ url: `sqlite:${join(dir, 'mailroom.db')}` }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  if (PG.problem !== undefined) {
    missingServerTest(PG, 'PostgreSQL sender-block test');
    return;
  }
  it('PostgreSQL', { timeout: 90_000 }, async () => {
    const { url, drop } = await pgTestSchema(PG.url, 'mr_senderblock');
    try {
      await holdsUntilResumed(sqlStore({ url, poolSize: 4 }));
    } finally {
      await drop();
    }
  });
});
