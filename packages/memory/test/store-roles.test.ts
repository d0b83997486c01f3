import type { AccountStore, Store, StoreLifecycle } from '@mailroom/core';
import { storeTestSuite } from '@mailroom/core/testing';
import { emptyState } from '../src/memory-state.js';
import { memoryAccountStore } from '../src/roles/account-store.js';

// An adapter under construction, as docs/adapters.md describes: only its lifecycle and `AccountStore`
// exist so far, and the kit run with `roles` checks just those (any other role's test would fail here).
storeTestSuite(
  'memory, AccountStore alone',
  () => {
    const state = emptyState();
    const partial: StoreLifecycle & AccountStore = {
      name: 'memory-accounts',
      capabilities: { multiProcess: false },
      async init() {},
      async close() {},
      ...memoryAccountStore(() => state),
    };
    return partial as unknown as Store;
  },
  { roles: ['AccountStore'] },
);
