import type { AuthContext } from '../context/auth-context.js';
import type { ConsentChange, TopicDefault, TopicState, TopicVisibility } from '../store/consent-records.js';
import type { MailroomBrand } from './brand-api.js';

/** A topic as the API shows it. */
export interface TopicView {
  key: string;
  name: string;
  description: string | null;
  /** `opt-out`: contacts receive it until they unsubscribe; `opt-in`: only once they subscribe. */
  default: TopicDefault;
  /** `public` topics are shown to contacts (the unsubscribe page); `private` ones are not. */
  visibility: TopicVisibility;
  /** Signups through a form stay `pending` until confirmed from a mailed link (double opt-in). */
  doubleOptIn: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A new topic. */
export interface TopicInput {
  /** 1 to 64 of `a-z 0-9 . _ -`, starting with a letter or digit. */
  key: string;
  name: string;
  description?: string | null;
  /** @default 'opt-in' */
  default?: TopicDefault;
  /** @default 'public' */
  visibility?: TopicVisibility;
  /** Signups through a form stay `pending` until confirmed (double opt-in). @default false */
  doubleOptIn?: boolean;
}

/** The fields of a topic to change; absent ones are kept. */
export type TopicPatch = Partial<Omit<TopicInput, 'key'>>;

/** A contact's state for one topic of the project. */
export interface ContactTopicView {
  key: string;
  name: string;
  visibility: TopicVisibility;
  /** What the contact receives: its explicit choice, or the topic's default. */
  state: TopicState;
  /** Whether `state` is the contact's own choice (else the topic's default). */
  explicit: boolean;
}

/** Who made a change over HTTP, kept in the consent record when known. */
export interface ConsentMeta {
  ip?: string | null;
  userAgent?: string | null;
}

/** One entry of a contact's consent history. */
export interface ConsentRecordView {
  id: string;
  at: Date;
  change: ConsentChange;
  topic: string | null;
  state: string | null;
  source: string;
  ip: string | null;
  userAgent: string | null;
  mailingRef: string | null;
  /** The wording the contact agreed to (a form's consent text, with its version), when known. */
  wording: string | null;
}

/** A page of a contact's consent history, oldest first. */
export interface ConsentHistoryPage {
  data: ConsentRecordView[];
  /** The cursor of the next page (`after`), or null at the end. */
  next: string | null;
}

/** `mailroom.topics`: a project's topics, each contact's state per topic, and the consent history. */
export interface MailroomTopics {
  list(auth: string | AuthContext): Promise<TopicView[]>;
  /** `CONFLICT` if the key exists; `VALIDATION_FAILED` for a bad key or name. */
  create(auth: string | AuthContext, input: TopicInput): Promise<TopicView>;
  /** `NOT_FOUND` for an unknown key (another project's included). */
  get(auth: string | AuthContext, key: string): Promise<TopicView>;
  update(auth: string | AuthContext, key: string, patch: TopicPatch): Promise<TopicView>;
  /** Removes the topic and every contact's choice for it (the history stays). */
  remove(auth: string | AuthContext, key: string): Promise<void>;
  /** Every topic of the project with the contact's state; `NOT_FOUND` when the project has no such contact. */
  contactTopics(auth: string | AuthContext, address: string): Promise<ContactTopicView[]>;
  /**
   * Set (or, with `null`, clear back to the default) a contact's topic states, creating a bare profile
   * when there is none; each actual change is a consent record of source `api` (or `options.source`) and
   * a `contact.topics_changed` event. `NOT_FOUND` for an unknown topic; nothing is written then.
   */
  setContactTopics(
    auth: string | AuthContext,
    address: string,
    topics: Record<string, TopicState | null>,
    options?: ConsentMeta & { source?: string },
  ): Promise<ContactTopicView[]>;
  /** A contact's consent history, oldest first (it outlives the profile: erasure keeps it under a hash). */
  history(
    auth: string | AuthContext,
    address: string,
    page?: { after?: string | null; limit?: number },
  ): Promise<ConsentHistoryPage>;
}

/** What topics and consent add to the engine (`Mailroom` extends it). */
export interface ConsentFacade {
  /** Topics, contacts' topic states and the consent history (docs/topics-and-consent.md). */
  topics: MailroomTopics;
  /** The project's colour and logo on the pages its contacts see (the preference centre). */
  brand: MailroomBrand;
}

export type { MailroomBrand, ProjectBrandPatch, ProjectBrandView } from './brand-api.js';
