import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createMailroom,
  type Mailroom,
  MailroomError,
  type MailroomOptions,
  type ManualClock,
  manualClock,
  type Store,
} from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { outboxTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * `options.storeContent`: with it on, the rendered subject, text and HTML of each delivery are kept and
 * readable through the engine; with it off (the default), rendered content never reaches the store, which
 * is checked on the raw rows and the raw bytes of the SQLite file, and on the memory store's own records.
 * Then the retention sweep clears kept content past its age.
 */

// better-sqlite3 is installed for @mailroom/sql (a dev dependency there), not at the workspace root.
const require = createRequire(new URL('../packages/sql/package.json', import.meta.url));
const Database = require('better-sqlite3') as typeof BetterSqlite3;

const START = new Date('2031-05-01T00:00:00.000Z');
const DAY = 86_400_000;
// Appears only once rendered: the template and the variables each hold a part of it.
const MARKER = 'Code QX17-Ann';

function broadcastBody(storeContent: boolean | undefined) {
  return {
    subject: 'Sub {{ code }}-{{ profile.firstName }}',
    sender: 'news@acme.test',
    message: '<p>Code {{ code }}-{{ profile.firstName }}</p>',
    recipients: [{ address: 'Ann@Example.TEST', name: 'Ann Lee', variables: { code: 'QX17' } }],
    ...(storeContent === undefined ? {} : { options: { storeContent } }),
  };
}

function sqliteFileText(path: string): string {
  const parts = [path, `${path}-wal`]
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString('latin1'));
  return parts.join('\n');
}

interface Engine {
  mailroom: Mailroom;
  secret: string;
  clock: ManualClock;
}

const opened: Mailroom[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((m) => m.close()));
});

async function engine(store: Store, extra: Partial<MailroomOptions> = {}): Promise<Engine> {
  const clock = manualClock(START);
  const mailroom = createMailroom({ store, transport: memoryTransport(), clock, ...extra });
  opened.push(mailroom);
  const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
  await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
  return { mailroom, secret, clock };
}

describe('storeContent on SQLite: read back from the raw rows and the file', () => {
  const cases = [
    { name: 'the main thread', renderThreads: 0 },
    { name: 'render threads', renderThreads: 1 },
  ];
  it.each(cases)(
    'off (explicitly or by default) writes no rendered content at all, rendering on $name',
    async ({ renderThreads }) => {
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-content-'));
      const path = join(dir, 'mailroom.db');
      const transport = outboxTransport({ dir: join(dir, 'outbox') });
      const { mailroom, secret } = await engine(sqlStore({ url: path }), {
        transport,
        worker: { renderThreads },
      });
      await mailroom.broadcast(secret, broadcastBody(false));
      await mailroom.broadcast(secret, broadcastBody(undefined));
      await mailroom.send(secret, { ...broadcastBody(undefined), options: undefined });
      await mailroom.worker.drain();
      await mailroom.close();
      opened.splice(opened.indexOf(mailroom), 1);

      const db = new Database(path, { readonly: true });
      try {
        const rows = db.prepare('SELECT status, content FROM mailroom_deliveries').all() as Array<{
          status: string;
          content: string | null;
        }>;
        expect(rows).toHaveLength(3);
        expect(rows.every((r) => r.status === 'sent' && r.content === null)).toBe(true);
      } finally {
        db.close();
      }
      // The 'on' case below finds the marker in the same kind of file: the probe can fail.
      expect(sqliteFileText(path)).not.toContain(MARKER);
    },
  );

  it.each(cases)(
    'on keeps the rendered subject, text and HTML, readable through the engine, rendering on $name',
    async ({ renderThreads }) => {
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-content-'));
      const path = join(dir, 'mailroom.db');
      const transport = outboxTransport({ dir: join(dir, 'outbox') });
      const { mailroom, secret } = await engine(sqlStore({ url: path }), {
        transport,
        worker: { renderThreads },
      });
      const { ref } = await mailroom.broadcast(secret, broadcastBody(true));
      await mailroom.worker.drain();

      const delivery = await mailroom.getDelivery(secret, ref, 'Ann@example.test');
      expect(delivery.content?.subject).toBe('Sub QX17-Ann');
      expect(delivery.content?.html).toContain(MARKER);
      expect(delivery.content?.text).toContain(MARKER);
      const [listed] = await mailroom.listDeliveries(secret, ref);
      expect(listed?.content).toEqual(delivery.content);
      await expect(mailroom.getDelivery(secret, ref, 'nobody@example.test')).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      await mailroom.close();
      opened.splice(opened.indexOf(mailroom), 1);

      const db = new Database(path, { readonly: true });
      try {
        const [row] = db.prepare('SELECT content FROM mailroom_deliveries').all() as Array<{
          content: string;
        }>;
        expect(JSON.parse(row?.content ?? 'null')).toEqual(delivery.content);
      } finally {
        db.close();
      }
      expect(sqliteFileText(path)).toContain(MARKER);
    },
  );
});

describe('storeContent on the memory store: its own records', () => {
  it('off keeps nothing, on keeps the rendering, and storeContentDefault turns it on for single messages', async () => {
    const store = memoryStore();
    const { mailroom, secret } = await engine(store, { storeContentDefault: false });
    const off = await mailroom.broadcast(secret, broadcastBody(false));
    const on = await mailroom.broadcast(secret, broadcastBody(true));
    await mailroom.worker.drain();
    const raw = async (ref: string) => {
      const mailing = await store.getMailing((await mailroom.authenticate(secret)).project.id, ref);
      return store.listDeliveries(mailing?.id ?? '', { limit: 10 });
    };
    expect((await raw(off.ref)).map((d) => d.content)).toEqual([null]);
    expect((await raw(on.ref))[0]?.content?.html).toContain(MARKER);

    const kept = await engine(memoryStore(), { storeContentDefault: true });
    const message = await kept.mailroom.send(kept.secret, {
      ...broadcastBody(undefined),
      options: undefined,
    });
    await kept.mailroom.worker.drain();
    const [delivery] = await kept.mailroom.listDeliveries(kept.secret, message.ref);
    expect(delivery?.content?.text).toContain(MARKER);
  });
});

describe('content retention', () => {
  it('pruneContent clears kept content older than the cutoff and nothing younger', async () => {
    const { mailroom, secret, clock } = await engine(
      sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-prune-')), 'm.db') }),
    );
    const old = await mailroom.broadcast(secret, broadcastBody(true));
    await mailroom.worker.drain();
    clock.advance(31 * DAY);
    const young = await mailroom.broadcast(secret, broadcastBody(true));
    await mailroom.worker.drain();
    clock.advance(DAY);

    await expect(mailroom.pruneContent()).rejects.toBeInstanceOf(MailroomError);
    expect(await mailroom.pruneContent({ olderThanDays: 30 })).toBe(1);
    expect((await mailroom.getDelivery(secret, old.ref, 'Ann@example.test')).content).toBeNull();
    expect((await mailroom.getDelivery(secret, young.ref, 'Ann@example.test')).content?.html).toContain(
      MARKER,
    );
    expect(await mailroom.pruneContent({ olderThanDays: 30 })).toBe(0);
    expect(await mailroom.pruneContent({ before: clock.now() })).toBe(1);
    expect((await mailroom.getDelivery(secret, young.ref, 'Ann@example.test')).content).toBeNull();
    // The delivery itself stays, only its content goes.
    expect((await mailroom.getDelivery(secret, young.ref, 'Ann@example.test')).status).toBe('sent');
  });

  it('a running worker sweeps content past retention.contentDays', async () => {
    const { mailroom, secret, clock } = await engine(memoryStore(), {
      retention: { contentDays: 7, sweepEveryMs: 20 },
      worker: { pollMs: 10 },
    });
    const { ref } = await mailroom.broadcast(secret, broadcastBody(true));
    await mailroom.worker.drain();
    clock.advance(6 * DAY);
    mailroom.worker.start();
    await new Promise((r) => setTimeout(r, 100));
    expect((await mailroom.getDelivery(secret, ref, 'Ann@example.test')).content).not.toBeNull();
    clock.advance(2 * DAY);
    await expect
      .poll(async () => (await mailroom.getDelivery(secret, ref, 'Ann@example.test')).content, {
        timeout: 3_000,
      })
      .toBeNull();
    expect(await mailroom.pruneContent()).toBe(0);
    await mailroom.worker.stop();
  });

  it('refuses a retention that is not a positive number of days', () => {
    expect(() =>
      createMailroom({ store: memoryStore(), transport: memoryTransport(), retention: { contentDays: 0 } }),
    ).toThrow(MailroomError);
  });
});
