import { type Capability, storeRole } from '../context/capability.js';
import type { ConsentStore } from '../store/consent-store.js';
import { createBrandApi } from './brand-api.js';
import { createTopicsApi } from './consent-api.js';
import type { ConsentFacade } from './consent-types.js';

/**
 * Topics and consent (issue 38), plugged into the engine through the capability seam: the store's
 * `ConsentStore` role, `mailroom.topics`, the `topicsChanged` event. The delivery loop and the sources read
 * the topic rule through `topic-gate.ts`; one-click unsubscribe and complaints write through
 * `consent-change.ts`.
 */
export const consentCapability: Capability<object, ConsentFacade, object> = {
  name: 'consent',
  storeRole: storeRole<ConsentStore>()(
    'createTopic',
    'getTopic',
    'listTopics',
    'updateTopic',
    'deleteTopic',
    'topicStates',
    'listTopicMembers',
    'findTopicStates',
    'writeConsent',
    'listConsentRecords',
    'eraseConsent',
    'appendConsentRecords',
    'findErasedAddresses',
    'forgetErasedAddress',
    'getProjectBrand',
    'putProjectBrand',
  ),
  create({ ctx, resolveAuth }) {
    return {
      facade: { topics: createTopicsApi(ctx, resolveAuth), brand: createBrandApi(ctx, resolveAuth) },
      provides: {},
    };
  },
};
