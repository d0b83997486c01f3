import type { ConsentRecord, ConsentWrite, TopicRecord, TopicStateRecord } from './consent-records.js';
import type { OutboxWrite } from './event-records.js';

/** The fields {@link ConsentStore.updateTopic} replaces; absent ones are kept. */
export interface TopicChange {
  name?: string;
  description?: string | null;
  defaultState?: TopicRecord['defaultState'];
  visibility?: TopicRecord['visibility'];
  doubleOptIn?: boolean;
}

/** A page of a contact's consent history: oldest first, strictly after the record id `after`. */
export interface ConsentPageOptions {
  after?: string | null;
  limit: number;
}

/**
 * Topics and consent (issue 38): a project's topics, each contact's state per topic (kept beside its
 * profile), and the append-only history of consent changes. Every rule of `Store` (store.ts) applies;
 * addresses are exact, already normalized.
 */
export interface ConsentStore {
  /** Insert a topic. `CONFLICT` if (projectId, key) exists (message `topic <key> already exists in project <projectId>`). */
  createTopic(topic: TopicRecord): Promise<void>;
  /** A topic by key in the project. */
  getTopic(projectId: string, key: string): Promise<TopicRecord | undefined>;
  /** The project's topics, by key. */
  listTopics(projectId: string): Promise<TopicRecord[]>;
  /** Replace the fields of `change` and set `updatedAt`; the topic as written, or undefined when none. */
  updateTopic(
    projectId: string,
    key: string,
    change: TopicChange,
    now: Date,
  ): Promise<TopicRecord | undefined>;
  /** Remove a topic and every contact's state for it (not the history); true if it existed. */
  deleteTopic(projectId: string, key: string): Promise<boolean>;
  /** A contact's explicit topic states, by topic key (topics at their default have no row). */
  topicStates(projectId: string, address: string): Promise<TopicStateRecord[]>;
  /**
   * The explicit states of one topic for `addresses` (any order; addresses at the default are left
   * out). One read per claim and per source page: the cheap check of who a topic's mail may reach.
   */
  findTopicStates(
    projectId: string,
    topicKey: string,
    addresses: readonly string[],
  ): Promise<TopicStateRecord[]>;
  /**
   * One consent change, in one transaction: create a bare profile (status `subscribed`, no name, traits
   * or labels) when the address has none, set or clear `write.topics`, set the profile's status to
   * `write.status` when given (moving its `updatedAt`), append `write.records`, and write `outbox`.
   * Race guarantee: atomic; the records and events are written exactly when the states are.
   */
  writeConsent(write: ConsentWrite, outbox?: OutboxWrite): Promise<void>;
  /** A contact's consent history, oldest first (by `at`, then id), at most `page.limit`. */
  listConsentRecords(projectId: string, address: string, page: ConsentPageOptions): Promise<ConsentRecord[]>;
  /**
   * Erasure of an address's consent data, in one transaction: delete its topic states and its signups
   * (`SignupStore`), rewrite the
   * `address` of its history to `hashed` and clear their `ip` and `userAgent`, then append `record`.
   */
  eraseConsent(projectId: string, address: string, hashed: string, record: ConsentRecord): Promise<void>;
}
