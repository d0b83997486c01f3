import type {
  ConsentRecord,
  ConsentWrite,
  ProjectBrandRecord,
  TopicRecord,
  TopicStateRecord,
} from './consent-records.js';
import type { OutboxWrite } from './event-records.js';
import type { PageOptions } from './paging.js';
import type { ProfileRecord } from './records.js';

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
  /**
   * The members of group `groupId` whose state for `topic` lets its mail reach them (their explicit state,
   * else the topic's `defaultState`: `opt-in` needs `subscribed`, `opt-out` no explicit state or
   * `subscribed`; an explicit `unsubscribed` or `pending` (double opt-in) leaves a member out),
   * with their profiles, ordered by address ascending, strictly after `page.after`, at most `page.limit`:
   * a page of a topic source in one read (the members the topic leaves out are never listed). Same
   * profile fields and order as `AudienceStore.listGroupMembers`.
   */
  listTopicMembers(
    projectId: string,
    groupId: string,
    topic: Pick<TopicRecord, 'key' | 'defaultState'>,
    page: PageOptions,
  ): Promise<ProfileRecord[]>;
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
   * Append history rows that change no state (a send past consent: `sent-unsubscribed`), in one
   * transaction. Ids are unique; the caller makes them.
   */
  appendConsentRecords(records: readonly ConsentRecord[]): Promise<void>;
  /**
   * Erasure of an address's consent data, in one transaction: delete its topic states and its signups
   * (`SignupStore`), rewrite the `address` of its history to `hashed` and clear their `ip` and
   * `userAgent`, append `record`, and keep `hashed` as an erased address of the project (erased at
   * `record.at`; kept once, a second erasure moves nothing) for {@link findErasedAddresses}.
   */
  eraseConsent(projectId: string, address: string, hashed: string, record: ConsentRecord): Promise<void>;
  /** Which of `hashed` (any order, `sha256:<hex>`) are erased addresses of the project. One read per claim. */
  findErasedAddresses(projectId: string, hashed: readonly string[]): Promise<string[]>;
  /** Forget an erased address (the person came back and asked for mail again); true if it was kept. */
  forgetErasedAddress(projectId: string, hashed: string): Promise<boolean>;
  /** The project's brand for its contact-facing pages, or undefined when never set. */
  getProjectBrand(projectId: string): Promise<ProjectBrandRecord | undefined>;
  /** Insert or replace the project's brand. */
  putProjectBrand(brand: ProjectBrandRecord): Promise<void>;
}
