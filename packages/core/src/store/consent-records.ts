/**
 * The records of topics and consent (issue 38): a project's topics, a contact's state per topic, and the
 * append-only history of every consent change. Like `records.ts`, a store persists them as they are.
 */

/** Whether a contact receives a topic's mail before saying anything: `opt-out` yes, `opt-in` no. */
export type TopicDefault = 'opt-in' | 'opt-out';

/** `public` topics are shown to the contact (the unsubscribe page, later the preference centre). */
export type TopicVisibility = 'public' | 'private';

/** A topic of a project: what a contact may choose to receive. Unique per (projectId, key). */
export interface TopicRecord {
  projectId: string;
  /** The project's name for it (`product-news`): 1 to 64 of `a-z 0-9 . _ -`. */
  key: string;
  /** Shown to contacts. */
  name: string;
  description: string | null;
  defaultState: TopicDefault;
  visibility: TopicVisibility;
  /**
   * Double opt-in (issue 38): a signup through a form keeps the contact `pending` for this topic until
   * they confirm from the link mailed to them; pending contacts receive none of the topic's mail.
   */
  doubleOptIn: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A contact's explicit choice for a topic; no row means the topic's default. `pending`: signed up through
 * a form of a double opt-in topic and not confirmed yet (receives nothing of the topic, whatever its default).
 */
export type TopicState = 'subscribed' | 'unsubscribed' | 'pending';

/** A contact's state for one topic. Unique per (projectId, address, topicKey). */
export interface TopicStateRecord {
  projectId: string;
  /** The normalized address. */
  address: string;
  topicKey: string;
  state: TopicState;
  updatedAt: Date;
}

/**
 * What a consent record says changed: a topic's state (`topic`), the whole subscription (`unsubscribe`,
 * `resubscribe`), a send past consent (`sent-unsubscribed`), the address's erasure (`erasure`), a signup
 * through a form (`signup`, the state `pending` under double opt-in) or its confirmation (`confirm`).
 */
export type ConsentChange =
  | 'topic'
  | 'unsubscribe'
  | 'resubscribe'
  | 'sent-unsubscribed'
  | 'erasure'
  | 'signup'
  | 'confirm';

/**
 * Where a consent change came from: `api`, `import:<label>`, `one-click` (the RFC 8058 POST and the
 * unsubscribe link), `unsubscribe-page` (the page's "unsubscribe from everything"), `preference-page`,
 * `complaint`, `erasure`, `broadcast` (a send with `includeUnsubscribed`).
 */
export type ConsentSource = string;

/** One consent change, appended and never updated (only erasure rewrites them). */
export interface ConsentRecord {
  /** `cns_...`, sortable by time. */
  id: string;
  projectId: string;
  /** The normalized address; after erasure, `sha256:<hex>` of it. */
  address: string;
  at: Date;
  change: ConsentChange;
  /** The topic of a `topic` change (or the topic a one-click came from), else null. */
  topicKey: string | null;
  /** The state after the change: a topic's `subscribed`/`unsubscribed`, null when the default again. */
  state: string | null;
  source: ConsentSource;
  /** The client's address, when the change came over HTTP from the contact. */
  ip: string | null;
  userAgent: string | null;
  /** The broadcast or message the change came from (a link, a complaint, a send), else null. */
  mailingRef: string | null;
  /**
   * The wording the contact agreed to, as shown (a form's consent text, `v<version>: <text>`), when the
   * change came from a form; absent or null otherwise.
   */
  wording?: string | null;
}

/** One topic state to write: `null` removes the row (the topic's default applies again). */
export interface TopicStateChange {
  topicKey: string;
  state: TopicState | null;
}

/** What {@link ConsentStore.writeConsent} writes in one transaction. */
export interface ConsentWrite {
  projectId: string;
  /** The normalized address; a bare profile is created when it has none. */
  address: string;
  /** Topic states to set or clear. */
  topics?: readonly TopicStateChange[];
  /** The profile's subscription status, when the change is to everything. */
  status?: 'subscribed' | 'unsubscribed';
  /** The history rows of the change, appended. */
  records: readonly ConsentRecord[];
  /**
   * Group memberships to set, by group id: `member: true` adds the address (nothing if it is one already,
   * its first joining time kept), false removes it (nothing if it is none).
   */
  groups?: ReadonlyArray<{ groupId: string; member: boolean }>;
  now: Date;
}

/**
 * How a project looks on the pages its contacts see (the preference centre, the confirmation pages): the
 * project's name comes from the project, these from its settings. One per project, absent until set.
 */
export interface ProjectBrandRecord {
  projectId: string;
  /** The accent colour, `#rrggbb`, or null for the pages' default. */
  color: string | null;
  /**
   * The logo as a `data:image/(png|jpeg|gif|webp|svg+xml);base64,...` URI (at most 64 KiB), or null: kept
   * inline so the pages load nothing from another host.
   */
  logo: string | null;
  updatedAt: Date;
}

/**
 * What erasure keeps of an address so that it is never mailed again by mistake: only the hash
 * (`sha256:<hex>` of project and address, as in the consent history), never the address.
 */
export interface ErasedAddressRecord {
  projectId: string;
  /** `sha256:<hex>`: `hashedAddress(projectId, address)`. */
  hashed: string;
  erasedAt: Date;
}
