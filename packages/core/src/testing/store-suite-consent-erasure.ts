/**
 * Store conformance, ConsentStore role: erasure of an address's consent, and the erased addresses kept
 * as hashes.
 */
import { expect, it } from 'vitest';
import { testTime } from './store-fixtures.js';
import { makeConsentRecord, makeTopic } from './store-suite-consent-fixtures.js';
import { addresses, type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

/** Registers the tests of `eraseConsent`, `findErasedAddresses`, `forgetErasedAddress`. */
export function describeConsentErasure(ctx: StoreSuiteContext): void {
  it('erases an address’s consent: states gone, history kept under the hash without IP or agent', async () => {
    const { project } = await seedProject(ctx.store);
    await ctx.store.createTopic(makeTopic(project.id));
    const [a, b] = addresses(2) as [string, string];
    const kept = makeConsentRecord(project.id, b);
    const gone = makeConsentRecord(project.id, a);
    for (const [address, record] of [
      [a, gone],
      [b, kept],
    ] as const) {
      await ctx.store.writeConsent({
        projectId: project.id,
        address,
        topics: [{ topicKey: 'news', state: 'subscribed' }],
        records: [record],
        now: testTime(1),
      });
    }
    const erasure = makeConsentRecord(project.id, 'sha256:abc', {
      change: 'erasure',
      topicKey: null,
      state: null,
      source: 'api',
      ip: null,
      userAgent: null,
      at: testTime(9),
    });
    await ctx.store.eraseConsent(project.id, a, 'sha256:abc', erasure);
    expect(await ctx.store.topicStates(project.id, a)).toEqual([]);
    expect(await ctx.store.listConsentRecords(project.id, a, { limit: 10 })).toEqual([]);
    expect(await ctx.store.listConsentRecords(project.id, 'sha256:abc', { limit: 10 })).toEqual([
      { ...gone, address: 'sha256:abc', ip: null, userAgent: null },
      erasure,
    ]);
    expect(await ctx.store.listConsentRecords(project.id, b, { limit: 10 })).toEqual([kept]);
    expect(await ctx.store.topicStates(project.id, b)).toHaveLength(1);
  });

  it('keeps an erased address as its hash once, finds it by hash, per project, and forgets it', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    const [a] = addresses(1) as [string];
    const erasure = (at: number) =>
      makeConsentRecord(project.id, 'sha256:aa', {
        change: 'erasure',
        topicKey: null,
        state: null,
        ip: null,
        userAgent: null,
        at: testTime(at),
      });
    expect(await ctx.store.findErasedAddresses(project.id, ['sha256:aa'])).toEqual([]);
    await ctx.store.eraseConsent(project.id, a, 'sha256:aa', erasure(1));
    // A second erasure (the address came back and went again) keeps one row.
    await ctx.store.eraseConsent(project.id, a, 'sha256:aa', erasure(2));
    expect(await ctx.store.findErasedAddresses(project.id, ['sha256:bb', 'sha256:aa', 'sha256:aa'])).toEqual([
      'sha256:aa',
    ]);
    expect(await ctx.store.findErasedAddresses(other.id, ['sha256:aa'])).toEqual([]);
    expect(await ctx.store.findErasedAddresses(project.id, [])).toEqual([]);
    expect(await ctx.store.forgetErasedAddress(project.id, 'sha256:aa')).toBe(true);
    expect(await ctx.store.forgetErasedAddress(project.id, 'sha256:aa')).toBe(false);
    expect(await ctx.store.findErasedAddresses(project.id, ['sha256:aa'])).toEqual([]);
  });
}
