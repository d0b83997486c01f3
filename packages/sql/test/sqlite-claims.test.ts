import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@mailroom/core';
import { makeDelivery, testTime } from '@mailroom/core/testing';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sqlStore } from '../src/index.js';
import { seedDeliveries, seedMailing } from './support/seed.js';

const dir = mkdtempSync(join(tmpdir(), 'mailroom-sql-claims-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const LEASE = 60_000;

/**
 * The fast paths of a SQLite file the store opened itself: claimed rows read back as one JSON document,
 * and outcomes written through the rowid the claim found (a hint, fenced by id and token like any
 * outcome).
 */
describe('sql:sqlite claims on a file the store opened', () => {
  const opened: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const handle of opened.splice(0).reverse()) await handle.close();
  });
  const open = async (): Promise<{ store: Store; file: string }> => {
    const file = join(dir, `claims-${++n}.db`);
    const store = sqlStore({ url: file });
    opened.push(store);
    await store.init();
    return { store, file };
  };
  /** A second connection to the file, as another program would open it. */
  const raw = (file: string): Database.Database => {
    const db = new Database(file, { timeout: 5000 });
    opened.push(db);
    return db;
  };

  it('a claimed delivery is exactly the delivery as stored, whatever its values', async () => {
    const { store } = await open();
    const awkward = 'quote " backslash \\ newline \n tab \t nul-free ünïcödé 😀 \u2028 </script>';
    const { deliveries } = await seedMailing(store, (mailing, batch) => [
      makeDelivery(mailing, batch, 'a@example.com', {
        name: awkward,
        variables: { text: awkward, n: 12.5, big: 9_007_199_254_740_991, list: [1, 'two', null, { x: [] }] },
        traits: { nested: { deep: { deeper: [true, false] } }, empty: {}, zero: 0, neg: -1e-7 },
        nextAttemptAt: testTime(-2),
      }),
      makeDelivery(mailing, batch, 'b@example.com', {
        variables: { 'key with "quotes"': 'value' },
        lastResponse: '451 try later',
        lastError: awkward,
        attempts: 3,
        leaseToken: 41,
        nextAttemptAt: testTime(-1),
      }),
      makeDelivery(mailing, batch, 'c@example.com', { nextAttemptAt: testTime(0) }),
    ]);
    // Content is written by an outcome: claim all three, give the third some, make them due again.
    const first = await store.claimDeliveries({ now: testTime(0), limit: 3, leaseMs: LEASE });
    expect(
      await store.completeDeliveries(
        first.map((d) => ({
          id: d.id,
          leaseToken: d.leaseToken,
          outcome: {
            status: 'queued' as const,
            nextAttemptAt: testTime(5),
            content:
              d.address === 'c@example.com' ? { subject: awkward, text: 'plain', html: null } : undefined,
            now: testTime(1),
          },
        })),
      ),
    ).toEqual([true, true, true]);

    const claimed = await store.claimDeliveries({ now: testTime(10), limit: 10, leaseMs: LEASE });
    expect(claimed).toHaveLength(3);
    for (const delivery of claimed) {
      expect(delivery).toStrictEqual(await store.getDelivery(delivery.id));
      expect(delivery.status).toBe('sending');
      expect(delivery.leaseExpiresAt).toEqual(testTime(10 + LEASE));
    }
    const byAddress = new Map(claimed.map((d) => [d.address, d]));
    expect(byAddress.get('a@example.com')).toMatchObject({
      name: awkward,
      variables: deliveries[0]?.variables,
      traits: deliveries[0]?.traits,
      content: null,
    });
    expect(byAddress.get('b@example.com')).toMatchObject({ attempts: 5, leaseToken: 43, lastError: awkward });
    expect(byAddress.get('c@example.com')?.content).toEqual({ subject: awkward, text: 'plain', html: null });
  });

  it('an outcome reaches its delivery, and only it, after the rows moved since the claim', async () => {
    const { store, file } = await open();
    await seedDeliveries(store, 3);
    const [a, b, c] = await store.claimDeliveries({ now: testTime(0), limit: 3, leaseMs: LEASE });
    if (!a || !b || !c) throw new Error('expected three claims');

    // Another program renumbers rows (as VACUUM may): `a` moves away and `b` takes the place where the
    // claim found `a`, so the rowid remembered for `a` now names `b`.
    const other = raw(file);
    const rowid = (id: string) =>
      (other.prepare('SELECT rowid FROM mailroom_deliveries WHERE id = ?').pluck().get(id) as number) ?? -1;
    const rowidOfA = rowid(a.id);
    other.prepare('UPDATE mailroom_deliveries SET rowid = ? WHERE id = ?').run(rowidOfA + 1_000_000, a.id);
    other.prepare('UPDATE mailroom_deliveries SET rowid = ? WHERE id = ?').run(rowidOfA, b.id);

    const done = { status: 'sent' as const, lastResponse: '250 ok', sentAt: testTime(1), now: testTime(1) };
    expect(
      await store.completeDeliveries([
        { id: a.id, leaseToken: a.leaseToken, outcome: done },
        // A stale token is refused whichever way the row is found.
        { id: c.id, leaseToken: c.leaseToken - 1, outcome: done },
      ]),
    ).toEqual([true, false]);
    expect(await store.getDelivery(a.id)).toMatchObject({ status: 'sent', lastResponse: '250 ok' });
    expect(await store.getDelivery(b.id)).toMatchObject({ status: 'sending', lastResponse: null });
    expect(await store.getDelivery(c.id)).toMatchObject({ status: 'sending', lastResponse: null });

    const complete = async (d: { id: string; leaseToken: number }, outcome: typeof done) =>
      (await store.completeDeliveries([{ id: d.id, leaseToken: d.leaseToken, outcome }]))[0];
    expect(await complete(b, { ...done, lastResponse: '250 b' })).toBe(true);
    expect(await complete(c, { ...done, lastResponse: '250 c' })).toBe(true);
    expect(await store.getDelivery(b.id)).toMatchObject({ status: 'sent', lastResponse: '250 b' });
    expect(await store.getDelivery(c.id)).toMatchObject({ status: 'sent', lastResponse: '250 c' });
    // A second outcome for a delivery already completed is refused (its hint is gone, and so is its lease).
    expect(await complete(a, { ...done, lastResponse: 'again' })).toBe(false);
    expect(await store.getDelivery(a.id)).toMatchObject({ lastResponse: '250 ok' });
  });
});
