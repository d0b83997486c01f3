/**
 * Store conformance: the ConsentStore role, its cases by part: topics (store-suite-topics.ts), consent
 * changes and their history (store-suite-consent-history.ts), erasure (store-suite-consent-erasure.ts),
 * and the project's brand (here).
 */
import { expect, it } from 'vitest';
import { testTime } from './store-fixtures.js';
import { describeConsentErasure } from './store-suite-consent-erasure.js';
import { describeConsentHistory } from './store-suite-consent-history.js';
import { type StoreSuiteContext, seedProject } from './store-suite-helpers.js';
import { describeTopics } from './store-suite-topics.js';

/** Registers the tests of topics and consent. */
export function describeConsent(ctx: StoreSuiteContext): void {
  describeTopics(ctx);
  describeConsentHistory(ctx);
  describeConsentErasure(ctx);

  it("puts and replaces a project's brand, per project", async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    expect(await ctx.store.getProjectBrand(project.id)).toBeUndefined();
    const logo = `data:image/png;base64,${'A'.repeat(4000)}`;
    const brand = { projectId: project.id, color: '#0a7f5a', logo, updatedAt: testTime(1) };
    await ctx.store.putProjectBrand(brand);
    expect(await ctx.store.getProjectBrand(project.id)).toEqual(brand);
    const cleared = { ...brand, color: null, logo: null, updatedAt: testTime(2) };
    await ctx.store.putProjectBrand(cleared);
    expect(await ctx.store.getProjectBrand(project.id)).toEqual(cleared);
    expect(await ctx.store.getProjectBrand(other.id)).toBeUndefined();
  });
}
