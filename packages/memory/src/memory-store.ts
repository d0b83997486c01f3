import type { Store } from '@mailroom/core';
import type { State } from './memory-state.js';
import { DRIVER_NAME, emptyState, fail } from './memory-state.js';
import { memoryAccountStore } from './roles/account-store.js';
import { memoryActivityStore } from './roles/activity-store.js';
import { memoryAudienceAdminStore } from './roles/audience-admin-store.js';
import { memoryAudienceStore } from './roles/audience-store.js';
import { memoryAutomationStore } from './roles/automation-store.js';
import { memoryConsentStore } from './roles/consent-store.js';
import { memoryDeliveryQueue } from './roles/delivery-queue.js';
import { memoryDestinationLimitStore } from './roles/destination-limit-store.js';
import { memoryDomainStore } from './roles/domain-store.js';
import { memoryEventStore } from './roles/event-store.js';
import { memoryIdempotencyStore } from './roles/idempotency-store.js';
import { memoryInboundSignalStore } from './roles/inbound-signal-store.js';
import { memoryKeyStore } from './roles/key-store.js';
import { memoryMailingStore } from './roles/mailing-store.js';
import { memoryPauseStore } from './roles/pause-store.js';
import { memoryReceivingStore } from './roles/receiving-store.js';
import { memoryResourceStore } from './roles/resource-store.js';
import { memoryRetentionStore } from './roles/retention-store.js';
import { memorySignupStore } from './roles/signup-store.js';
import { memorySourceJobStore } from './roles/source-job-store.js';
import { memoryTrackingStore } from './roles/tracking-store.js';

/**
 * A Store that keeps everything in this process's memory: for tests, scripts and trying Mailroom out.
 * Rows are copied on the way in and out, so callers never share objects with the store. Every
 * method checks and writes within one synchronous run, which makes each primitive atomic against the
 * others in the same process; nothing is shared between processes (`multiProcess: false`).
 *
 * @example
 * ```ts
 * const mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
 * ```
 */
export function memoryStore(): Store {
  let state: State | undefined = emptyState();

  /** The live state, or `STORE_FAILED` after `close()`. */
  const db = (): State => {
    if (!state) throw fail('the store is closed');
    return state;
  };

  // Each role is in its own file (roles/*.ts), over the same state.
  return {
    name: DRIVER_NAME,
    capabilities: { multiProcess: false },

    async init() {
      db();
    },
    async close() {
      state = undefined;
    },

    ...memoryAccountStore(db),
    ...memoryAudienceStore(db),
    ...memoryAudienceAdminStore(db),
    ...memoryMailingStore(db),
    ...memoryDeliveryQueue(db),
    ...memorySourceJobStore(db),
    ...memoryIdempotencyStore(db),
    ...memoryRetentionStore(db),
    ...memoryInboundSignalStore(db),
    ...memoryEventStore(() => db().outbox),
    ...memoryTrackingStore(db),
    ...memoryDomainStore(db),
    ...memoryDestinationLimitStore(db),
    ...memoryPauseStore(db),
    ...memoryKeyStore(db),
    ...memoryResourceStore(db),
    ...memoryActivityStore(() => db().outbox),
    ...memoryConsentStore(db),
    ...memoryAutomationStore(db),
    ...memorySignupStore(db),
    ...memoryReceivingStore(db),
  };
}
