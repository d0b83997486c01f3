import { createMailroom, type Mailroom, MailroomError, type RequestOptions } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  sql,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../packages/sql/test/support/databases.js';
import {
  type AppDatabase,
  type AppKind,
  type AppTables,
  appKysely,
  openAppDatabase,
} from './support/app-database.js';
import { type CountingSink, startCountingSink } from './support/crash-sink.js';
import { waitUntil } from './support/wait.js';

// Sending inside the app's own transaction (issue 28): on each database, the order and its receipt commit
// together or not at all, checked at a real SMTP sink and by counting the rows of every Mailroom table.

const KINDS: AppKind[] = ['sqlite', 'postgres', 'mysql'];
const CONCURRENT = 1_000;

/** Thrown inside an app transaction to roll it back. */
class Rollback extends Error {}

const receipt = (customer: string, order: string) => ({
  subject: `Your order ${order}`,
  sender: 'shop@acme.test',
  message: `<p>Thank you for order ${order}.</p>`,
  recipients: customer,
});

for (const kind of KINDS) {
  describe(`sending inside the app's transaction on ${kind}`, () => {
    const databases = testDatabases(kind);
    if (!databases) return;
    let app: AppDatabase;
    let sink: CountingSink;
    let mailroom: Mailroom;
    let secret: string;

    beforeAll(async () => {
      app = await openAppDatabase(kind, await databases.create());
      sink = await startCountingSink();
      mailroom = createMailroom({
        store: app.store,
        transport: smtpTransport({ host: sink.host, port: sink.port, maxConnections: 4 }),
        worker: { pollMs: 20 },
      });
      const created = await mailroom.admin.createProject({ name: 'Shop' });
      secret = created.secret;
      await mailroom.admin.addSender(created.project.id, { address: 'shop@acme.test', name: 'Shop' });
    });
    afterAll(async () => {
      await mailroom?.close();
      await app?.db.destroy();
      await sink?.close();
    });

    /** The order `id` and its receipt to `customer`, in one app transaction that commits or rolls back. */
    async function placeOrder(
      id: string,
      customer: string,
      outcome: 'commit' | 'rollback',
      options: Omit<RequestOptions, 'transaction'> = {},
      inside?: (tx: Transaction<AppTables>, ref: string) => Promise<void>,
    ) {
      let result: Awaited<ReturnType<Mailroom['send']>> | undefined;
      try {
        await app.db.transaction().execute(async (tx) => {
          await tx.insertInto('app_orders').values({ id, customer }).execute();
          result = await mailroom.send(secret, receipt(customer, id), { ...options, transaction: tx });
          await inside?.(tx, result.ref);
          if (outcome === 'rollback') throw new Rollback();
        });
      } catch (error) {
        if (!(error instanceof Rollback)) throw error;
      }
      if (!result) throw new Error('no send result');
      return result;
    }

    const arrivalsFor = (address: string) => sink.arrivals.filter((a) => a.rcpt === address);

    it('a transaction that rolls back sends nothing and leaves no row', async () => {
      const before = await app.countRows();
      await placeOrder('o-rollback', 'rollback@example.test', 'rollback', {}, async (tx) => {
        // The request did write, through the app's transaction.
        const { rows } = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM mailroom_deliveries`.execute(tx);
        expect(Number(rows[0]?.n)).toBe((before.mailroom_deliveries ?? Number.NaN) + 1);
      });
      expect(await app.countRows()).toEqual(before);
      expect(await app.orders()).not.toContain('o-rollback');
      await mailroom.worker.drain();
      expect(arrivalsFor('rollback@example.test')).toEqual([]);
    });

    it('a transaction that commits is delivered once, and nothing is visible before the commit', async () => {
      const sent = await placeOrder('o-commit', 'commit@example.test', 'commit', {}, async (_tx, ref) => {
        // On SQLite the store shares the app's one connection, held by this transaction: nothing else runs.
        if (kind === 'sqlite') return;
        await expect(mailroom.getMailing(secret, ref)).rejects.toMatchObject({ code: 'NOT_FOUND' });
        expect(await mailroom.worker.runOnce()).toBe(0);
      });
      expect(await app.orders()).toContain('o-commit');
      await mailroom.worker.drain();
      await mailroom.worker.drain();
      expect(arrivalsFor('commit@example.test')).toHaveLength(1);
      expect((await mailroom.getMailing(secret, sent.ref)).status).toBe('completed');
    });

    it("a refused request leaves no row and the app's transaction usable", async () => {
      const before = await app.countRows();
      await app.db.transaction().execute(async (tx) => {
        await tx.insertInto('app_orders').values({ id: 'o-refused-1', customer: 'x@example.test' }).execute();
        // The key is written first, then the sender is refused: the savepoint takes the key back.
        await expect(
          mailroom.send(
            secret,
            { ...receipt('refused@example.test', 'o-refused-1'), sender: 'nobody@acme.test' },
            { transaction: tx, idempotencyKey: 'refused-key' },
          ),
        ).rejects.toMatchObject({ code: 'SENDER_NOT_ALLOWED' });
        await tx.insertInto('app_orders').values({ id: 'o-refused-2', customer: 'x@example.test' }).execute();
      });
      expect(await app.orders()).toEqual(expect.arrayContaining(['o-refused-1', 'o-refused-2']));
      expect(await app.countRows()).toEqual(before);
    });

    it('an idempotency key used in a rolled-back transaction can be used again', async () => {
      const key = `order-idem-${kind}`;
      await placeOrder('o-idem', 'idem@example.test', 'rollback', { idempotencyKey: key });
      const first = await placeOrder('o-idem', 'idem@example.test', 'commit', { idempotencyKey: key });
      expect(first.replayed).toBeUndefined();
      // Committed with the request: a repeat (here outside any transaction) answers the first result.
      const repeat = await mailroom.send(secret, receipt('idem@example.test', 'o-idem'), {
        idempotencyKey: key,
      });
      expect(repeat).toMatchObject({ ref: first.ref, replayed: true });
      await mailroom.worker.drain();
      expect(arrivalsFor('idem@example.test')).toHaveLength(1);
    });

    it.skipIf(kind === 'sqlite')(
      'a key held by another open transaction: the request waits for it, then replays its answer or takes the key',
      async () => {
        for (const outcome of ['commit', 'rollback'] as const) {
          const key = `held-${kind}-${outcome}`;
          const address = `held-${outcome}@example.test`;
          let release: () => void = () => undefined;
          const gate = new Promise<void>((resolve) => {
            release = resolve;
          });
          let held: () => void = () => undefined;
          const holding = new Promise<void>((resolve) => {
            held = resolve;
          });
          const first = app.db
            .transaction()
            .execute(async (tx) => {
              const result = await mailroom.send(secret, receipt(address, key), {
                transaction: tx,
                idempotencyKey: key,
              });
              held();
              await gate;
              if (outcome === 'rollback') throw new Rollback();
              return result;
            })
            .catch((error: unknown) => {
              if (error instanceof Rollback) return undefined;
              throw error;
            });
          await holding;
          let waited = true;
          const second = app.db
            .transaction()
            .execute((tx) =>
              mailroom.send(secret, receipt(address, key), { transaction: tx, idempotencyKey: key }),
            )
            .finally(() => {
              waited = false;
            });
          await new Promise((resolve) => setTimeout(resolve, 300));
          expect(waited).toBe(true);
          release();
          const [a, b] = await Promise.all([first, second]);
          if (outcome === 'commit') expect(b).toEqual({ ...a, replayed: true });
          else expect(b.replayed).toBeUndefined();
        }
        await mailroom.worker.drain();
        expect(arrivalsFor('held-commit@example.test')).toHaveLength(1);
        expect(arrivalsFor('held-rollback@example.test')).toHaveLength(1);
      },
    );

    it('broadcast batches, initial and later, commit or roll back with the app', async () => {
      const body = {
        subject: 'News',
        sender: 'shop@acme.test',
        message: '<p>News</p>',
        recipients: ['b1@example.test', 'b2@example.test'],
      };
      let ref = '';
      // An initial batch rolled back leaves nothing; committed, it is the broadcast.
      const before = await app.countRows();
      await app.db
        .transaction()
        .execute(async (tx) => {
          await mailroom.broadcast(secret, body, { transaction: tx });
          throw new Rollback();
        })
        .catch((error: unknown) => {
          if (!(error instanceof Rollback)) throw error;
        });
      expect(await app.countRows()).toEqual(before);
      await app.db.transaction().execute(async (tx) => {
        ({ ref } = await mailroom.broadcast(secret, body, { transaction: tx }));
      });
      const later = (address: string) => ({ broadcastRef: ref, recipients: [address] });
      const afterFirst = await app.countRows();
      await app.db
        .transaction()
        .execute(async (tx) => {
          await mailroom.broadcast(secret, later('b3@example.test'), { transaction: tx });
          throw new Rollback();
        })
        .catch((error: unknown) => {
          if (!(error instanceof Rollback)) throw error;
        });
      expect(await app.countRows()).toEqual(afterFirst);
      await app.db.transaction().execute(async (tx) => {
        const result = await mailroom.broadcast(secret, later('b4@example.test'), { transaction: tx });
        expect(result.batch).toEqual({ seq: 2, recipients: 1, inserted: 1 });
      });
      await mailroom.worker.drain();
      for (const address of ['b1@example.test', 'b2@example.test', 'b4@example.test'])
        expect(arrivalsFor(address)).toHaveLength(1);
      expect(arrivalsFor('b3@example.test')).toEqual([]);
    });

    it('a batch send (sendBatch) commits or rolls back with the app, its items in one write', async () => {
      const batch = (tag: string) => ({
        items: [
          receipt(`ba-${tag}@example.test`, `oa-${tag}`),
          receipt(`bb-${tag}@example.test`, `ob-${tag}`),
        ],
      });
      const before = await app.countRows();
      await app.db
        .transaction()
        .execute(async (tx) => {
          const result = await mailroom.sendBatch(secret, batch('rollback'), { transaction: tx });
          expect(result.accepted).toBe(2);
          throw new Rollback();
        })
        .catch((error: unknown) => {
          if (!(error instanceof Rollback)) throw error;
        });
      expect(await app.countRows()).toEqual(before);
      await app.db.transaction().execute(async (tx) => {
        await tx
          .insertInto('app_orders')
          .values({ id: 'o-batch', customer: 'ba-commit@example.test' })
          .execute();
        const result = await mailroom.sendBatch(secret, batch('commit'), {
          transaction: tx,
          idempotencyKey: 'batch-in-app-tx',
        });
        expect(result).toMatchObject({ mode: 'strict', accepted: 2, refused: 0 });
      });
      await mailroom.worker.drain();
      await mailroom.worker.drain();
      expect(arrivalsFor('ba-commit@example.test')).toHaveLength(1);
      expect(arrivalsFor('bb-commit@example.test')).toHaveLength(1);
      expect(arrivalsFor('ba-rollback@example.test')).toEqual([]);
      // The batch's key was committed with it: a repeat answers the first result and sends nothing.
      const again = await mailroom.sendBatch(secret, batch('commit'), { idempotencyKey: 'batch-in-app-tx' });
      expect(again.replayed).toBe(true);
      await mailroom.worker.drain();
      expect(arrivalsFor('ba-commit@example.test')).toHaveLength(1);
    });

    it(`${CONCURRENT} concurrent app transactions, half rolled back: exactly the committed half arrives`, {
      timeout: 240_000,
    }, async () => {
      const address = (i: number) => `c${String(i).padStart(4, '0')}@example.test`;
      mailroom.worker.start();
      try {
        const outcomes = await Promise.allSettled(
          Array.from({ length: CONCURRENT }, (_, i) =>
            placeOrder(`c-${i}`, address(i), i % 2 === 0 ? 'commit' : 'rollback'),
          ),
        );
        const failed = outcomes.filter((o) => o.status === 'rejected');
        expect(failed.map((o) => String((o as PromiseRejectedResult).reason)).slice(0, 3)).toEqual([]);
        const committed = Array.from({ length: CONCURRENT / 2 }, (_, j) => address(2 * j));
        const isOurs = (rcpt: string) => /^c\d{4}@example\.test$/.test(rcpt);
        await waitUntil(
          () => sink.arrivals.filter((a) => isOurs(a.rcpt)).length >= committed.length,
          120_000,
          { intervalMs: 50 },
        );
        await mailroom.worker.stop();
        await mailroom.worker.drain();
        const arrived = sink.arrivals.filter((a) => isOurs(a.rcpt)).map((a) => a.rcpt);
        expect(arrived.sort()).toEqual(committed);
        expect((await app.orders()).filter((id) => id.startsWith('c-'))).toHaveLength(committed.length);
      } finally {
        await mailroom.worker.stop();
      }
    });

    it.skipIf(kind === 'sqlite')(
      "takes the store opened the other way (on the app's Kysely, or on a pool of its own)",
      async () => {
        // PostgreSQL: the store on the app's instance (known by identity); MySQL: on a pool of its own
        // (the transaction is checked by the database's id). SQLite has only the first way.
        const url = await databases.create();
        const other = await openAppDatabase(kind, url, 4);
        await other.store.close();
        const store =
          kind === 'postgres'
            ? sqlStore({ db: other.db as Kysely<unknown>, dialect: kind })
            : sqlStore({ url, poolSize: 2 });
        const engine = createMailroom({
          store,
          transport: smtpTransport({ host: sink.host, port: sink.port }),
        });
        try {
          await store.init();
          const { project, secret: key } = await engine.admin.createProject({ name: 'Other' });
          await engine.admin.addSender(project.id, { address: 'shop@acme.test' });
          const before = await other.countRows();
          for (const outcome of ['rollback', 'commit'] as const) {
            await other.db
              .transaction()
              .execute(async (tx) => {
                await engine.send(key, receipt(`other-${outcome}@example.test`, outcome), {
                  transaction: tx,
                });
                if (outcome === 'rollback') throw new Rollback();
              })
              .catch((error: unknown) => {
                if (!(error instanceof Rollback)) throw error;
              });
            if (outcome === 'rollback') expect(await other.countRows()).toEqual(before);
          }
          await engine.worker.drain();
          expect(arrivalsFor('other-commit@example.test')).toHaveLength(1);
          expect(arrivalsFor('other-rollback@example.test')).toEqual([]);
        } finally {
          await engine.close();
          await other.db.destroy();
        }
      },
    );

    it('refuses a handle that is not an open transaction on the store’s database, before writing', async () => {
      const before = await app.countRows();
      // The app's Kysely instance itself, not a transaction.
      await expect(
        mailroom.send(secret, receipt('no@example.test', 'o-x'), { transaction: app.db }),
      ).rejects.toMatchObject({ code: 'TRANSACTION_REFUSED' });
      // A transaction on another database of the same server (or another SQLite file) whose Mailroom
      // tables have another id, and one with no Mailroom tables at all.
      const other = await openAppDatabase(kind, await databases.create(), 2);
      const bare = appKysely(kind, await databases.create(), 2);
      try {
        for (const db of [other.db, bare] as Kysely<AppTables>[]) {
          await db.transaction().execute(async (tx) => {
            await expect(
              mailroom.send(secret, receipt('no@example.test', 'o-x'), { transaction: tx }),
            ).rejects.toMatchObject({ code: 'TRANSACTION_REFUSED' });
            // The app's transaction is still usable.
            await sql`SELECT 1`.execute(tx);
          });
        }
      } finally {
        await other.close();
        await bare.destroy();
      }
      expect(await app.countRows()).toEqual(before);
    });
  });
}

describe("the memory store and the app's transaction", () => {
  it('refuses with TRANSACTION_REFUSED naming the reason, and writes nothing', async () => {
    const store = memoryStore();
    const mailroom = createMailroom({ store, transport: memoryTransport() });
    const { project, secret } = await mailroom.admin.createProject({ name: 'Shop' });
    await mailroom.admin.addSender(project.id, { address: 'shop@acme.test' });
    const error = await mailroom
      .send(secret, receipt('a@example.test', 'o-1'), { transaction: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MailroomError);
    expect(error).toMatchObject({ code: 'TRANSACTION_REFUSED', retryable: false });
    expect((error as Error).message).toMatch(/memory store cannot write in the app's transaction/);
    await expect(
      mailroom.broadcast(secret, { ...receipt('a@example.test', 'o-1') }, { transaction: {} }),
    ).rejects.toMatchObject({ code: 'TRANSACTION_REFUSED' });
    expect(await store.listMailings(project.id, 'message', { limit: 10 })).toEqual([]);
    expect(await store.listMailings(project.id, 'broadcast', { limit: 10 })).toEqual([]);
    await mailroom.close();
  });
});

describe('a pg PoolClient inside BEGIN ... COMMIT', () => {
  const databases = testDatabases('postgres');
  if (!databases) return;

  it('commits with the app, rolls back with it; refused outside BEGIN, and on a handle without row counts', {
    timeout: 60_000,
  }, async () => {
    const url = await databases.create();
    const app = await openAppDatabase('postgres', url);
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const sink = await startCountingSink();
    const mailroom = createMailroom({
      store: app.store,
      transport: smtpTransport({ host: sink.host, port: sink.port }),
    });
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Shop' });
      await mailroom.admin.addSender(project.id, { address: 'shop@acme.test' });
      const client = await pool.connect();
      try {
        const before = await app.countRows();
        await client.query('BEGIN');
        await client.query('INSERT INTO app_orders (id, customer) VALUES ($1, $2)', [
          'p-1',
          'pc1@example.test',
        ]);
        await mailroom.send(secret, receipt('pc1@example.test', 'p-1'), { transaction: client });
        await client.query('ROLLBACK');
        expect(await app.countRows()).toEqual(before);

        await client.query('BEGIN');
        await client.query('INSERT INTO app_orders (id, customer) VALUES ($1, $2)', [
          'p-2',
          'pc2@example.test',
        ]);
        const { ref } = await mailroom.send(secret, receipt('pc2@example.test', 'p-2'), {
          transaction: client,
        });
        await expect(mailroom.getMailing(secret, ref)).rejects.toMatchObject({ code: 'NOT_FOUND' });
        await client.query('COMMIT');
        expect((await mailroom.getMailing(secret, ref)).status).toBe('queued');

        // A Kysely handle over the client whose driver reports no row counts (as prisma-extension-kysely
        // runs raw statements): the store decides by those counts, so it is refused before any write.
        await client.query('BEGIN');
        const noCounts = new Kysely<unknown>({ dialect: rowsOnlyDialect(client) });
        const inside = await app.countRows();
        await expect(
          mailroom.send(secret, receipt('pc4@example.test', 'p-4'), {
            transaction: noCounts,
            idempotencyKey: 'k',
          }),
        ).rejects.toMatchObject({
          code: 'TRANSACTION_REFUSED',
          message: expect.stringMatching(/row counts|rows a statement changed/),
        });
        await client.query('SELECT 1');
        await client.query('ROLLBACK');
        expect(await app.countRows()).toEqual(inside);

        // Outside BEGIN each statement would commit on its own: refused before anything is written.
        const outside = await app.countRows();
        await expect(
          mailroom.send(secret, receipt('pc3@example.test', 'p-3'), { transaction: client }),
        ).rejects.toThrow(/not inside a transaction/);
        expect(await app.countRows()).toEqual(outside);
      } finally {
        client.release();
      }
      await mailroom.worker.drain();
      expect(sink.arrivals.map((a) => a.rcpt)).toEqual(['pc2@example.test']);
      expect(await app.orders()).toEqual(['p-2']);
    } finally {
      await mailroom.close();
      await app.db.destroy();
      await pool.end();
      await sink.close();
    }
  });
});

/** A PostgreSQL dialect over `client` whose statements report their rows and never a row count. */
function rowsOnlyDialect(client: pg.PoolClient): Dialect {
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      return { rows: (await client.query(query.sql, [...query.parameters])).rows as R[] };
    },
    streamQuery() {
      throw new Error('not supported');
    },
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: async () => undefined,
    commitTransaction: async () => undefined,
    rollbackTransaction: async () => undefined,
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => driver,
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
