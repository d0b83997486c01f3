import type { EventRecord } from '@mailroom/core';
import { testTime } from '@mailroom/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqlClaims } from '../src/claims/create-sql-claims.js';
import { connect } from '../src/connection/connect.js';
import { createSqlRunner } from '../src/connection/sql-runner.js';
import { dialectOf } from '../src/dialects/dialect-of.js';
import { writeOutbox } from '../src/roles/event-store.js';
import { createCodec } from '../src/rows/codec.js';
import { completeDeliveries } from '../src/writes/delivery-completions.js';
import { storeOn, testDatabases } from './support/databases.js';
import { seedDeliveries } from './support/seed.js';

for (const kind of ['sqlite', 'postgres', 'mysql'] as const) {
  describe(`sql:${kind} delivery completions`, () => {
    const databases = testDatabases(kind);
    if (!databases) return;
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it('the outcomes of one call are written together, each fenced on its own', async () => {
      const url = await databases.create();
      const store = storeOn(url);
      cleanups.push(() => store.close());
      await store.init();
      await seedDeliveries(store, 40);
      const claimed = await store.claimDeliveries({ now: testTime(0), limit: 40, leaseMs: 60_000 });
      expect(claimed).toHaveLength(40);

      // On its own connection, with a runner that counts the statements it sends.
      const { db, release } = connect({ url });
      cleanups.push(release);
      const dialect = dialectOf(kind);
      const runner = createSqlRunner(dialect);
      let statements = 0;
      const counting: typeof runner = {
        ...runner,
        run(...args) {
          statements++;
          return runner.run(...args);
        },
      };
      const codec = createCodec(dialect.jsonParsedByDriver);

      const [first, second] = claimed;
      if (!first || !second) throw new Error('expected claims');
      const written = await completeDeliveries(
        {
          dialect,
          db,
          runner: counting,
          claims: createSqlClaims(dialect, counting, codec),
          codec,
          writeOutbox,
        },
        [
          ...claimed.map((d, i) => ({
            id: d.id,
            leaseToken: i === 1 ? d.leaseToken + 1 : d.leaseToken,
            outcome: {
              status: i % 2 === 0 ? ('sent' as const) : ('queued' as const),
              nextAttemptAt: i % 2 === 0 ? undefined : testTime(9_000),
              lastResponse: `250 ${i}`,
              now: testTime(10),
            },
          })),
          // The same delivery again in the same call: it goes to the next group and finds it done.
          {
            id: first.id,
            leaseToken: first.leaseToken,
            outcome: { status: 'failed' as const, now: testTime(11) },
          },
        ],
      );

      expect(written).toEqual([...claimed.map((_, i) => i !== 1), false]);
      expect(await store.getDelivery(first.id)).toMatchObject({
        status: 'sent',
        lastResponse: '250 0',
        leaseExpiresAt: null,
      });
      expect(await store.getDelivery(second.id)).toMatchObject({ status: 'sending', lastResponse: null });
      const third = claimed[3];
      expect(await store.getDelivery(third?.id ?? '')).toMatchObject({
        status: 'queued',
        nextAttemptAt: testTime(9_000),
        lastResponse: '250 3',
      });
      // SQLite and PostgreSQL write a group with one statement (plus the repeated id's own); MySQL
      // writes one statement per outcome, in one transaction.
      if (kind !== 'mysql') expect(statements).toBeLessThanOrEqual(2);
    });

    it("outcomes with events: an outcome's events are written only when its fence held", async () => {
      const url = await databases.create();
      const store = storeOn(url);
      cleanups.push(() => store.close());
      await store.init();
      const { mailing } = await seedDeliveries(store, 6);
      const claimed = await store.claimDeliveries({ now: testTime(0), limit: 6, leaseMs: 60_000 });
      expect(claimed).toHaveLength(6);

      const { db, release } = connect({ url });
      cleanups.push(release);
      const dialect = dialectOf(kind);
      const runner = createSqlRunner(dialect);
      let statements = 0;
      const counting: typeof runner = {
        ...runner,
        run(...args) {
          statements++;
          return runner.run(...args);
        },
      };
      const codec = createCodec(dialect.jsonParsedByDriver);
      const eventOf = (d: (typeof claimed)[number], n: number): EventRecord => ({
        id: `evt_${d.id}_${n}`,
        projectId: mailing.projectId,
        type: 'email.sent',
        mailingRef: mailing.ref,
        deliveryId: d.id,
        address: d.address,
        data: { event_id: `evt_${d.id}_${n}`, project_id: mailing.projectId, response: `250 ok ç ${n}` },
        createdAt: testTime(10),
      });
      const written = await completeDeliveries(
        {
          dialect,
          db,
          runner: counting,
          claims: createSqlClaims(dialect, counting, codec),
          codec,
          writeOutbox,
        },
        claimed.map((d, i) => ({
          id: d.id,
          // The second's fence does not hold: its events must not be written.
          leaseToken: i === 1 ? d.leaseToken + 1 : d.leaseToken,
          outcome: {
            status: 'sent' as const,
            sentAt: testTime(10),
            now: testTime(10),
            // Two events for the first, none for the last.
            ...(i < 5 && {
              outbox: { events: i === 0 ? [eventOf(d, 0), eventOf(d, 1)] : [eventOf(d, 0)], messages: [] },
            }),
          },
        })),
      );

      expect(written).toEqual(claimed.map((_, i) => i !== 1));
      const events = await store.listEvents(mailing.projectId, {}, { limit: 100 });
      const expected = claimed.flatMap((d, i) =>
        i === 1 || i === 5 ? [] : i === 0 ? [`evt_${d.id}_0`, `evt_${d.id}_1`] : [`evt_${d.id}_0`],
      );
      expect(events.map((e) => e.id).sort()).toEqual(expected.sort());
      const first = events.find((e) => e.id === `evt_${claimed[0]?.id}_1`);
      expect(first).toMatchObject({ deliveryId: claimed[0]?.id, data: { response: '250 ok ç 1' } });
      // PostgreSQL: the outcomes and their events are one statement (no transaction around them).
      if (kind === 'postgres') expect(statements).toBe(1);
    });
  });
}
