/**
 * The Store conformance kit. Every Store adapter runs it from a one-line test file:
 *
 * @example
 * ```ts
 * import { storeTestSuite } from '@mailroom/core/testing';
 * import { memoryStore } from '@mailroom/memory';
 *
 * storeTestSuite('memory', () => memoryStore());
 * ```
 *
 * The tests are grouped by the store's roles (`AccountStore`, `AudienceStore`, ...; see `store.ts`), one file
 * each (`store-suite-<role>.ts`). A new adapter can be made to pass one role at a time with the `roles`
 * option, or with vitest's name filter (`vitest run -t "AudienceStore"`); every role's tests set up their
 * rows with `AccountStore.createProject` and `MailingStore.commitBatch`, so those come first.
 *
 * An adapter is correct when the kit passes (docs/architecture.md, invariant 9). The kit also exports the
 * record factories it uses (`makeProject`, `makeMailing`, `makeDelivery`, ...) for other tests.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store, StoreRole } from '../store/store.js';
import { describeAccounts } from './store-suite-accounts.js';
import { describeActivity } from './store-suite-activity.js';
import { describeAudience } from './store-suite-audience.js';
import { describeAudienceAdmin } from './store-suite-audience-admin.js';
import { describeAutomations } from './store-suite-automations.js';
import { describeConsent } from './store-suite-consent.js';
import { describeDeliveryQueue } from './store-suite-delivery-queue.js';
import { describeDestinationLimits } from './store-suite-destination-limits.js';
import { describeDomains } from './store-suite-domains.js';
import { describeEvents } from './store-suite-events.js';
import type { StoreSuiteContext } from './store-suite-helpers.js';
import { describeIdempotency } from './store-suite-idempotency.js';
import { describeInbound } from './store-suite-inbound.js';
import { describeKeys } from './store-suite-keys.js';
import { describeMailings } from './store-suite-mailings.js';
import { describeMultiProcess } from './store-suite-multi-process.js';
import { describePauses } from './store-suite-pauses.js';
import { describeProfileMerge } from './store-suite-profile-merge.js';
import { describeReceiving } from './store-suite-receiving.js';
import { describeResources } from './store-suite-resources.js';
import { describeRetention } from './store-suite-retention.js';
import { describeSignup } from './store-suite-signup.js';
import { describeSources } from './store-suite-sources.js';
import { describeTracking } from './store-suite-tracking.js';

export * from './store-fixtures.js';

/** Toggles of {@link storeTestSuite}. */
export interface StoreTestSuiteOptions {
  /** Groups of tests to skip, each with the reason (shown in the test name). */
  skip?: {
    /** Skip the tests that race two store instances on one backend. */
    multiProcess?: string;
  };
  /**
   * Only the tests of these roles (and the lifecycle tests); all of them when unset. For an adapter under
   * construction: make one role pass at a time. A finished adapter runs them all.
   * @example roles: ['AccountStore', 'AudienceStore']
   */
  roles?: readonly StoreRole[];
  /**
   * Number of concurrent callers in the race tests (claims, commits, compare-and-sets).
   * @default 8
   */
  concurrency?: number;
  /**
   * Opens a second store on the same backend as `store`, as another process would (its own
   * connections), for the multi-process tests. The kit calls `init()` and `close()` on it. Without it
   * the multi-process tests are skipped.
   * @example connect: () => sqlStore({ dialect: 'postgres', url: process.env.MAILROOM_PG_URL })
   */
  connect?: (store: Store) => Promise<Store> | Store;
}

/**
 * Registers the conformance tests of a Store adapter with vitest (`describe`/`it`), checking every method
 * of `Store` against its JSDoc.
 *
 * @param name Shown in the test names, for example `memory` or `sql:sqlite`.
 * @param factory Returns a new, EMPTY store for each test (the kit calls `init()` before and `close()`
 *   after). Claims and `nextDueAt` span the whole store, so rows left by another test would break them.
 * @param options Toggles; see {@link StoreTestSuiteOptions}.
 */
export function storeTestSuite(
  name: string,
  factory: () => Promise<Store> | Store,
  options: StoreTestSuiteOptions = {},
): void {
  describe(`Store conformance: ${name}`, () => {
    let current: Store | undefined;
    const ctx: StoreSuiteContext = {
      get store(): Store {
        if (!current) throw new Error('storeTestSuite: no store outside a test');
        return current;
      },
      concurrency: options.concurrency ?? 8,
    };

    beforeEach(async () => {
      current = await factory();
      await current.init();
    });

    afterEach(async () => {
      const store = current;
      current = undefined;
      await store?.close();
    });

    describe('lifecycle', () => {
      it('has a name and declares its capabilities', () => {
        expect(typeof ctx.store.name).toBe('string');
        expect(ctx.store.name.length).toBeGreaterThan(0);
        expect(typeof ctx.store.capabilities.multiProcess).toBe('boolean');
      });

      it('init is safe to call again', async () => {
        await ctx.store.init();
        await Promise.all([ctx.store.init(), ctx.store.init()]);
        expect(await ctx.store.listProjects()).toEqual([]);
      });
    });

    const roles: Record<StoreRole, (ctx: StoreSuiteContext) => void> = {
      AccountStore: describeAccounts,
      AudienceStore: describeAudience,
      AudienceAdminStore: describeAudienceAdmin,
      MailingStore: describeMailings,
      DeliveryQueue: describeDeliveryQueue,
      SourceJobStore: describeSources,
      IdempotencyStore: describeIdempotency,
      RetentionStore: describeRetention,
      InboundSignalStore: describeInbound,
      // Events lean on the other roles to seed mailings and deliveries; the race of two processes needs `connect`.
      EventStore: (c) => describeEvents(c, options.connect),
      TrackingStore: describeTracking,
      DomainStore: (c) => describeDomains(c, options.connect),
      DestinationLimitStore: (c) => describeDestinationLimits(c, options.connect),
      PauseStore: describePauses,
      KeyStore: describeKeys,
      ResourceStore: describeResources,
      ActivityStore: describeActivity,
      ConsentStore: describeConsent,
      AutomationStore: describeAutomations,
      SignupStore: describeSignup,
      ReceivingStore: describeReceiving,
    };
    for (const [role, register] of Object.entries(roles) as Array<[StoreRole, typeof describeAccounts]>) {
      if (!options.roles || options.roles.includes(role)) describe(role, () => register(ctx));
    }
    // Profiles are written by the commits of two roles; the merge rule is checked on both together.
    const merging: StoreRole[] = ['AudienceStore', 'MailingStore', 'SourceJobStore'];
    if (!options.roles || merging.every((role) => options.roles?.includes(role))) describeProfileMerge(ctx);
    // Races of several store instances across roles (claims, commits): for a complete adapter.
    if (!options.roles) describeMultiProcess(ctx, options.connect, options.skip?.multiProcess);
  });
}
