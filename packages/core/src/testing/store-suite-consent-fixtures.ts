/** Store conformance: the fixtures of the ConsentStore role's cases (a topic, a consent record). */
import type { ConsentRecord, TopicRecord } from '../store/consent-records.js';
import { testId, testTime } from './store-fixtures.js';

/** A test topic. */
export function makeTopic(projectId: string, overrides: Partial<TopicRecord> = {}): TopicRecord {
  return {
    projectId,
    key: 'news',
    name: 'News <b>ç</b>',
    description: 'What we ship',
    defaultState: 'opt-in',
    visibility: 'public',
    doubleOptIn: false,
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** A test consent record. */
export function makeConsentRecord(
  projectId: string,
  address: string,
  overrides: Partial<ConsentRecord> = {},
): ConsentRecord {
  return {
    id: testId('cns'),
    projectId,
    address,
    at: testTime(),
    change: 'topic',
    topicKey: 'news',
    state: 'subscribed',
    source: 'api',
    ip: '192.0.2.1',
    userAgent: 'Agent ç',
    mailingRef: null,
    ...overrides,
  };
}
