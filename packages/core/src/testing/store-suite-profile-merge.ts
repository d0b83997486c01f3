/**
 * Store conformance: profiles end as the core's profile-merge rule says (`newProfile`, `mergeProfile`),
 * whichever write carries them. A store may merge its own way (the SQL store merges in SQL for speed);
 * random sequences of upserts through `commitBatch` and `commitSourcePage` must leave exactly the
 * profiles the rule computes, `updatedAt` included (it moves only when the rule changed the profile).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeProfile, newProfile } from '../audience/profile-merge.js';
import type {
  Json,
  ProfileRecord,
  ProfileUpsert,
  ProfileUpsertOptions,
  SourceJobRecord,
  Variables,
} from '../store/records.js';
import { makeBatch, makeSourceJob, testTime } from './store-fixtures.js';
import { type StoreSuiteContext, seedMailing, seedProject } from './store-suite-helpers.js';

/** Random sequences per store: enough to meet every path of the SQL store, few enough for a server. */
const RUNS = 40;
/** Addresses of one sequence (each sequence has its own, so that sequences never meet). */
const ADDRESSES = 4;
/** Trait keys: plain ones, and keys every object inherits or an assignment would not create. */
const TRAIT_KEYS = ['plan', 'city', 'constructor', 'toString', '__proto__'];

/** Traits from entries (`Object.fromEntries` keeps a `__proto__` key as a key). */
const traitsOf = (value: fc.Arbitrary<Json>): fc.Arbitrary<Variables> =>
  fc
    .uniqueArray(fc.tuple(fc.constantFrom(...TRAIT_KEYS), value), { selector: ([key]) => key, maxLength: 3 })
    .map((entries) => Object.fromEntries(entries) as Variables);

/** A row without its address: `at` is its index among the sequence's addresses. */
type RowSpec = Omit<ProfileUpsert, 'address'> & { at: number };

const rowOf = (value: fc.Arbitrary<Json>): fc.Arbitrary<RowSpec> =>
  fc.record(
    {
      at: fc.integer({ min: 0, max: ADDRESSES - 1 }),
      name: fc.constantFrom('Ann', 'Bob', null),
      traits: traitsOf(value),
      labels: fc.array(fc.constantFrom('x', 'y', 'ä'), { maxLength: 4 }),
    },
    { requiredKeys: ['at'] },
  );

// String traits only, as CSV rows carry them (the SQLite store merges those in SQL), or any JSON value.
const stringValue = fc.constantFrom<Json>('free', 'pro', 'Zoë "Z"', '');
const anyValue = fc.oneof(
  stringValue,
  fc.constantFrom<Json>(1, 1.5, true, null),
  fc.constant<Json>({ deep: [1, 'x'] }),
);

const callArbitrary = fc.record({
  rows: fc.oneof(
    // Mostly distinct addresses, as the engine sends them; now and then a repeat, which applies in order.
    { arbitrary: fc.uniqueArray(rowOf(stringValue), { selector: (r) => r.at, maxLength: 4 }), weight: 2 },
    { arbitrary: fc.uniqueArray(rowOf(anyValue), { selector: (r) => r.at, maxLength: 4 }), weight: 2 },
    { arbitrary: fc.array(rowOf(anyValue), { maxLength: 4 }), weight: 1 },
  ),
  options: fc.record({
    onExistingProfile: fc.constantFrom('preserve' as const, 'override' as const),
    onExistingTrait: fc.constantFrom('preserve' as const, 'override' as const),
  }),
  via: fc.constantFrom('commitBatch' as const, 'commitSourcePage' as const),
});

/** Applies `rows` to `state` by the core's rule, as a write at `now` must. */
function apply(
  state: Map<string, ProfileRecord>,
  projectId: string,
  rows: readonly ProfileUpsert[],
  options: ProfileUpsertOptions,
  now: Date,
): void {
  for (const row of rows) {
    const stored = state.get(row.address);
    if (!stored) {
      state.set(row.address, {
        ...newProfile(row),
        projectId,
        address: row.address,
        status: 'subscribed',
        createdAt: now,
        updatedAt: now,
      });
      continue;
    }
    const { changed, skippedTraits: _skipped, ...fields } = mergeProfile(stored, row, options);
    if (changed) state.set(row.address, { ...stored, ...fields, updatedAt: now });
  }
}

/** Registers the property test of the profile merge (it writes through `MailingStore` and `SourceJobStore`). */
export function describeProfileMerge(ctx: StoreSuiteContext): void {
  describe('profile merge', () => {
    it('every write leaves the profiles the core rule computes (newProfile, mergeProfile)', async () => {
      const { project, mailing, claimed, year } = await seedClaimedSourceJob(ctx);
      let sequence = 0;
      let seq = 1;

      await fc.assert(
        fc.asyncProperty(fc.array(callArbitrary, { minLength: 1, maxLength: 5 }), async (calls) => {
          sequence += 1;
          const addressOf = (i: number) => `s${sequence}-${i}@example.com`;
          const expected = new Map<string, ProfileRecord>();
          for (const [i, call] of calls.entries()) {
            const now = testTime(i * 1_000);
            const rows: ProfileUpsert[] = call.rows.map(({ at, ...row }) => ({
              ...row,
              address: addressOf(at),
            }));
            if (call.via === 'commitBatch') {
              seq += 1;
              await ctx.store.commitBatch({
                target: { mailingId: mailing.id, allowStatus: ['sending'], setStatus: 'sending' },
                batch: makeBatch(mailing.id, { seq, createdAt: now }),
                deliveries: [],
                profiles: rows,
                profileOptions: call.options,
                sourceJobs: [],
                now,
              });
            } else {
              const page = await ctx.store.commitSourcePage(claimed.id, claimed.leaseToken, {
                deliveries: [],
                profiles: rows,
                profileOptions: call.options,
                patch: {},
                leaseUntil: testTime(year),
                now,
              });
              expect(page).toEqual({ inserted: 0 });
            }
            apply(expected, project.id, rows, call.options, now);
          }
          const all = Array.from({ length: ADDRESSES }, (_, i) => addressOf(i));
          const found = await ctx.store.findProfiles(project.id, all);
          const byAddress = (profiles: Iterable<ProfileRecord>) =>
            Object.fromEntries([...profiles].map((p) => [p.address, p]));
          expect(byAddress(found)).toEqual(byAddress(expected.values()));
        }),
        { numRuns: RUNS },
      );
    }, 180_000);

    it('keeps the traits cap across writes: traits past it are skipped, stored ones kept (mergeProfile)', async () => {
      const { project, mailing, claimed, year } = await seedClaimedSourceJob(ctx);
      const keys = (prefix: string, n: number) =>
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 'v'])) as Variables;
      const wide = 'wide@example.com';
      const heavy = 'heavy@example.com';
      const small = 'small@example.com';
      // Padding rows make the page a big one (the SQLite file's writer thread takes pages of 1,024 rows).
      const padding = Array.from({ length: 1_030 }, (_, i) => ({
        address: `pad${i}@example.com`,
        traits: { plan: 'free' },
      }));
      const preserve: ProfileUpsertOptions = { onExistingProfile: 'preserve', onExistingTrait: 'preserve' };
      const override: ProfileUpsertOptions = { onExistingProfile: 'preserve', onExistingTrait: 'override' };
      const page = async (rows: ProfileUpsert[], options: ProfileUpsertOptions, at: number) =>
        ctx.store.commitSourcePage(claimed.id, claimed.leaseToken, {
          deliveries: [],
          profiles: rows,
          profileOptions: options,
          patch: {},
          leaseUntil: testTime(year),
          now: testTime(at),
        });
      const first: ProfileUpsert[] = [
        { address: wide, traits: keys('k', 990) },
        { address: heavy, traits: { big: 'x'.repeat(60_000) } },
        { address: small, traits: { plan: 'free' } },
      ];
      await page([...first, ...padding], preserve, 0);
      const second: ProfileUpsert[] = [
        // 990 + 20 keys: the first 10 new ones fit, the other 10 are skipped.
        { address: wide, traits: { ...keys('n', 20), k0: 'changed' } },
        // 10,000 more bytes pass 64 KiB: skipped; the small trait after it still fits.
        { address: heavy, traits: { more: 'y'.repeat(10_000), city: 'Oslo' } },
        { address: small, traits: { city: 'Oslo' } },
      ];
      // The page reports what the cap left out: 10 keys of `wide`, the big trait of `heavy`.
      expect(await page([...second, ...padding], override, 1_000)).toEqual({
        inserted: 0,
        skippedTraits: 11,
      });
      // Through commitBatch as well (the accepted requests' write).
      const third: ProfileUpsert[] = [{ address: wide, traits: keys('m', 5) }];
      await ctx.store.commitBatch({
        target: { mailingId: mailing.id, allowStatus: ['sending'], setStatus: 'sending' },
        batch: makeBatch(mailing.id, { seq: 2, createdAt: testTime(2_000) }),
        deliveries: [],
        profiles: third,
        profileOptions: preserve,
        sourceJobs: [],
        now: testTime(2_000),
      });

      const expected = new Map<string, ProfileRecord>();
      apply(expected, project.id, first, preserve, testTime(0));
      apply(expected, project.id, second, override, testTime(1_000));
      apply(expected, project.id, third, preserve, testTime(2_000));
      const found = await ctx.store.findProfiles(project.id, [wide, heavy, small]);
      const byAddress = (profiles: Iterable<ProfileRecord>) =>
        Object.fromEntries([...profiles].map((p) => [p.address, p]));
      expect(byAddress(found)).toEqual(byAddress(expected.values()));
      const traitsOf = (address: string) => found.find((p) => p.address === address)?.traits ?? {};
      expect(Object.keys(traitsOf(wide))).toHaveLength(1_000);
      expect(traitsOf(wide).k0).toBe('changed');
      expect(traitsOf(wide).n9).toBe('v');
      expect(traitsOf(wide).n10).toBeUndefined();
      expect(traitsOf(heavy).more).toBeUndefined();
      expect(traitsOf(heavy).city).toBe('Oslo');
      expect(traitsOf(small)).toEqual({ plan: 'free', city: 'Oslo' });
    }, 120_000);
  });
}

/** A project with a sending mailing whose one source job is claimed for a year (the writes go through it). */
async function seedClaimedSourceJob(ctx: StoreSuiteContext) {
  const { project } = await seedProject(ctx.store);
  const year = 365 * 24 * 3_600_000;
  let job: SourceJobRecord | undefined;
  const { mailing } = await seedMailing(ctx.store, {
    project,
    mailing: { status: 'sending' },
    sourceJobs: (m, b) => {
      job = makeSourceJob(m, b);
      return [job];
    },
  });
  const claimed = await ctx.store.claimSourceJob({ now: testTime(), leaseMs: year });
  if (!job || claimed?.id !== job.id) throw new Error('expected to claim the source job');
  return { project, mailing, job, claimed, year };
}
