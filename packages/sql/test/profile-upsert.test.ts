import type { Json, ProfileUpsert, ProfileUpsertOptions } from '@mailroom/core';
import {
  makeBatch,
  makeDelivery,
  makeMailing,
  makeProject,
  makeSecret,
  testTime,
} from '@mailroom/core/testing';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { MergeableProfile } from '../src/profile-merge.js';
import { mergeProfile } from '../src/profile-merge.js';
import { storeOn, testDatabases } from './support/databases.js';

/**
 * Each database merges profiles its own way (SQLite in SQL for string traits, else row by row in
 * TypeScript; PostgreSQL in SQL; MySQL read-merge-write): random sequences of upserts, through `upsertProfiles` and through `commitBatch`, must
 * leave exactly what the contract's rules (as `mergeProfile` states them) say, and touch `updatedAt` only
 * of the profiles they changed.
 */
interface Expected extends MergeableProfile {
  updatedAt: number;
}

function apply(
  state: Map<string, Expected>,
  rows: ProfileUpsert[],
  options: ProfileUpsertOptions,
  at: number,
): void {
  for (const row of rows) {
    const stored = state.get(row.address);
    if (!stored) {
      state.set(row.address, {
        name: row.name ?? null,
        traits: row.traits ?? {},
        labels: row.labels ?? [],
        updatedAt: at,
      });
      continue;
    }
    const { changed, ...next } = mergeProfile(stored, row, options);
    if (changed) state.set(row.address, { ...next, updatedAt: at });
  }
}

const ADDRESSES = ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com'];
const rowOf = (value: fc.Arbitrary<Json>): fc.Arbitrary<ProfileUpsert> =>
  fc.record(
    {
      address: fc.constantFrom(...ADDRESSES),
      name: fc.constantFrom('Ann', 'Bob', null),
      traits: fc.dictionary(fc.constantFrom('plan', 'city', 'n'), value, { maxKeys: 2 }),
      labels: fc.array(fc.constantFrom('x', 'y', 'ä'), { maxLength: 3 }),
    },
    { requiredKeys: ['address'] },
  );
const callOf = (row: fc.Arbitrary<ProfileUpsert>) =>
  fc.record({
    // Mostly distinct addresses, as callers send them; now and then a repeat, which must merge in order.
    rows: fc.oneof(
      { arbitrary: fc.uniqueArray(row, { selector: (r) => r.address, maxLength: 4 }), weight: 4 },
      { arbitrary: fc.array(row, { maxLength: 4 }), weight: 1 },
    ),
    options: fc.record({
      onExistingProfile: fc.constantFrom('preserve' as const, 'override' as const),
      onExistingTrait: fc.constantFrom('preserve' as const, 'override' as const),
    }),
    viaBatch: fc.boolean(),
  });
const call = callOf(
  rowOf(
    fc.oneof(fc.constantFrom<Json>('free', 'pro', 1, 1.5, true, null), fc.constant<Json>({ deep: [1, 'x'] })),
  ),
);
// String traits only, as CSV rows carry: SQLite merges these set-based, in SQL (sqlite-writes.ts).
const stringCall = callOf(rowOf(fc.constantFrom<Json>('free', 'pro', 'Zoë "Z"', '')));

for (const kind of ['sqlite', 'postgres', 'mysql'] as const) {
  describe(`sql:${kind} profile upserts`, () => {
    const databases = testDatabases(kind);
    if (!databases) return;
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    const mergesAsTheContractSays = async (arbitrary: typeof call, numRuns: number) => {
      const store = storeOn(await databases.empty());
      cleanups.push(() => store.close());
      await store.init();
      await fc.assert(
        fc.asyncProperty(fc.array(arbitrary, { minLength: 1, maxLength: 6 }), async (calls) => {
          const project = makeProject();
          await store.createProject(project, makeSecret(project.id));
          const mailing = makeMailing(project.id, { status: 'sending' });
          let created = false;
          const state = new Map<string, Expected>();
          for (const [i, { rows, options, viaBatch }] of calls.entries()) {
            const at = testTime(i * 1000);
            if (viaBatch) {
              const batch = makeBatch(mailing.id, { seq: i + 1 });
              await store.commitBatch({
                target: created
                  ? { mailingId: mailing.id, allowStatus: ['sending'], setStatus: 'sending' }
                  : { create: mailing },
                batch,
                deliveries: rows.map((r) => makeDelivery(mailing, batch, r.address)),
                profiles: rows,
                profileOptions: options,
                sourceJobs: [],
                now: at,
              });
              created = true;
            } else {
              await store.upsertProfiles(project.id, rows, options, at);
            }
            apply(state, rows, options, at.getTime());
          }
          const found = await store.findProfiles(project.id, ADDRESSES);
          const actual = Object.fromEntries(
            found.map((p) => [
              p.address,
              { name: p.name, traits: p.traits, labels: p.labels, updatedAt: p.updatedAt.getTime() },
            ]),
          );
          expect(actual).toEqual(Object.fromEntries(state));
        }),
        { numRuns },
      );
    };

    it('merge as the contract says, whichever path writes them', async () => {
      await mergesAsTheContractSays(call, kind === 'sqlite' ? 60 : 25);
    }, 120_000);

    it('merge string traits as the contract says (the set-based path on SQLite)', async () => {
      await mergesAsTheContractSays(stringCall, kind === 'sqlite' ? 60 : 25);
    }, 120_000);
  });
}
