/** One public topic of a preference page, with the contact's state. */
export interface PreferenceTopic {
  key: string;
  /** The project's text: escape it. */
  name: string;
  /** The project's text: escape it. */
  description: string | null;
  /** Whether the contact receives it now (its own choice, else the topic's default). */
  subscribed: boolean;
}

/** What a preference page shows (issue 38): the project, its brand, the contact's public topics. */
export interface PreferencePage {
  projectId: string;
  /** The project's text: escape it. */
  projectName: string;
  /** `#rrggbb`, or null for the page's default colour. */
  color: string | null;
  /** A `data:image/...` URI (the page loads nothing from elsewhere), or null. */
  logo: string | null;
  /** The normalized address (a page shows it masked). */
  address: string;
  /** The contact's `locale` trait (`de`, `fr-CH`), or null: picks the page's language. */
  locale: string | null;
  /** The project's public topics, by key. */
  topics: PreferenceTopic[];
  /** Whether the contact is unsubscribed from everything (no broadcast reaches it). */
  unsubscribed: boolean;
  /** The CSRF token the page's forms send back: bound to this link, taken for 24 hours. */
  csrf: string;
}

/** A POST of the preference page. */
export interface PreferenceSave {
  /** The page's CSRF token; `FORBIDDEN` when missing, altered, of another link or too old. */
  csrf: string | null | undefined;
  /**
   * `save` (the default): receive exactly the public topics in `topics`, leave the others; `unsubscribe-all`:
   * unsubscribe from everything; `resubscribe`: subscribe to broadcasts again.
   */
  action?: 'save' | 'unsubscribe-all' | 'resubscribe';
  /** The keys of the public topics to receive (unknown and private keys are ignored). */
  topics?: readonly string[];
  /** The client's address and user agent, kept in the consent records. */
  ip?: string | null;
  userAgent?: string | null;
}

/** The page after a save, and whether anything changed (a repeat changes and records nothing). */
export interface PreferenceSaved extends PreferencePage {
  changed: boolean;
}

/** The hosted preference centre of an engine with `unsubscribe` (the links share its base URL and secret). */
export interface PreferenceCentre {
  /** The contact's link: `<baseUrl>/preferences/<token>`, the same for every message to it. */
  link(projectId: string, address: string): Promise<string>;
  /**
   * What the token's page shows. `NOT_FOUND` for a forged, altered or foreign token (or a project that is
   * gone); `GONE` when the contact was erased.
   */
  open(token: string): Promise<PreferencePage>;
  /**
   * Apply a POST of the page through the consent change path (records of source `preference-page`, with
   * IP and user agent; events). Errors as {@link open}, and `FORBIDDEN` for a bad CSRF token (nothing
   * written).
   */
  save(token: string, input: PreferenceSave): Promise<PreferenceSaved>;
}
