import { createMailroom, type Mailroom, type ManualClock, manualClock, workflow } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../packages/sql/test/support/databases.js';
import { type AppDatabase, openAppDatabase } from './support/app-database.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * Automations (issue 39): a workflow started inside the app's own transaction on PostgreSQL, through a
 * Kysely transaction and a `pg` client inside BEGIN: the order and the run commit together or not at all,
 * checked at a real SMTP sink and in the run tables.
 */

/** Thrown inside an app transaction to roll it back. */
class Rollback extends Error {}

const HOUR = 3_600_000;

describe("automations started inside the app's transaction on PostgreSQL", () => {
  const databases = testDatabases('postgres');
  if (!databases) return;
  let app: AppDatabase;
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let clock: ManualClock;
  let secret: string;
  let url: string;

  const mailTo = (address: string) => sink.messages.filter((m) => m.envelope.rcptTo.includes(address));
  const tracked = (customer: string, id: string) => ({
    event: 'order.placed',
    contact: customer,
    id,
    properties: { order: id },
  });
  async function runAll(ms: number) {
    clock.advance(ms);
    await mailroom.automations.runDue();
    await mailroom.worker.drain();
  }

  beforeAll(async () => {
    url = await databases.create();
    app = await openAppDatabase('postgres', url);
    sink = await startSmtpSink();
    clock = manualClock(new Date('2031-06-01T08:00:00.000Z'));
    mailroom = createMailroom({
      store: app.store,
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      clock,
    });
    const created = await mailroom.admin.createProject({ name: 'Shop' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: 'shop@acme.test', name: 'Shop' });
    await mailroom.admin.createTemplate(created.project.id, {
      ref: 'review',
      format: 'text',
      subject: 'How was order {{ event.order }}?',
      source: 'Tell us.',
    });
    await mailroom.automations.create(
      secret,
      workflow('Review request')
        .on('order.placed')
        .wait('2h')
        .send({ template: 'review', sender: 'shop@acme.test' })
        .build(),
    );
  });
  afterAll(async () => {
    await mailroom?.close();
    await app?.db.destroy();
    await sink?.close();
  });

  it('Kysely: a rolled-back transaction leaves no event, no run and sends nothing; a committed one exactly one', async () => {
    const before = await app.countRows();
    try {
      await app.db.transaction().execute(async (tx) => {
        await tx.insertInto('app_orders').values({ id: 'o-1', customer: 'rolled@example.test' }).execute();
        const result = await mailroom.track(secret, tracked('rolled@example.test', 'o-1'), {
          transaction: tx,
        });
        expect(result.started).toHaveLength(1);
        throw new Rollback();
      });
    } catch (error) {
      if (!(error instanceof Rollback)) throw error;
    }
    expect(await app.countRows()).toEqual(before);

    await app.db.transaction().execute(async (tx) => {
      await tx.insertInto('app_orders').values({ id: 'o-2', customer: 'kept@example.test' }).execute();
      await mailroom.track(secret, tracked('kept@example.test', 'o-2'), { transaction: tx });
      // Not visible to a worker before the commit.
      expect(await mailroom.automations.runDue()).toBe(0);
    });
    // The same id again, after the commit: a no-op.
    expect((await mailroom.track(secret, tracked('kept@example.test', 'o-2'))).recorded).toBe(false);
    await runAll(0);
    await runAll(2 * HOUR);
    await sink.waitFor(1);
    await runAll(24 * HOUR);
    expect(mailTo('rolled@example.test')).toEqual([]);
    expect(mailTo('kept@example.test').map((m) => m.parsed.subject)).toEqual(['How was order o-2?']);
  });

  it('pg client inside BEGIN: rolled back, nothing; committed, exactly one message', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query("INSERT INTO app_orders (id, customer) VALUES ('o-3', 'pg-rolled@example.test')");
      await mailroom.track(secret, tracked('pg-rolled@example.test', 'o-3'), { transaction: client });
      await client.query('ROLLBACK');
      await client.query('BEGIN');
      await client.query("INSERT INTO app_orders (id, customer) VALUES ('o-4', 'pg-kept@example.test')");
      await mailroom.track(secret, tracked('pg-kept@example.test', 'o-4'), { transaction: client });
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
    const count = sink.messages.length;
    await runAll(0);
    await runAll(2 * HOUR);
    await sink.waitFor(count + 1);
    await runAll(24 * HOUR);
    expect(mailTo('pg-rolled@example.test')).toEqual([]);
    expect(mailTo('pg-kept@example.test').map((m) => m.parsed.subject)).toEqual(['How was order o-4?']);
  });

  it('refuses a transaction on a store that cannot write in it, writing nothing', async () => {
    const { memoryStore, memoryTransport } = await import('@mailroom/memory');
    const other = createMailroom({ store: memoryStore(), transport: memoryTransport() });
    const { secret: s } = await other.admin.createProject({ name: 'M' });
    await expect(other.track(s, tracked('x@example.test', 'o-5'), { transaction: {} })).rejects.toMatchObject(
      {
        code: 'TRANSACTION_REFUSED',
      },
    );
    await other.close();
  });
});
