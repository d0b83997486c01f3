/** Options of the one-click unsubscribe links. */
export interface UnsubscribeOptions {
  /**
   * Where the HTTP adapter is reachable from the recipients' mail clients, mount point included: links are
   * `<baseUrl>/unsubscribe/<token>`. A function is read each time a link is made (for a server whose port is
   * known only once it listens).
   * @example 'https://mail.example.com/api'
   */
  baseUrl: string | (() => string);
  /**
   * The HMAC key that signs the tokens (at least 16 characters; 32 random bytes recommended). Every process
   * that sends or serves links needs the same one.
   * @default a random secret generated once and kept in the store (`Store.ensureSetting`), shared by every
   * process on that store
   */
  secret?: string;
}
/** Who a one-click unsubscribe token stands for. */
export interface UnsubscribeTarget {
  projectId: string;
  projectName: string;
  /** The normalized address. */
  address: string;
  /** The broadcast whose message carried the link. */
  broadcastRef: string;
  /**
   * The topic the message was sent to (its source's or the broadcast's), when it still exists: the link
   * then unsubscribes from that topic only (issue 38). `name` is the project's text: escape it.
   */
  topic: { key: string; name: string } | null;
}

/** How {@link UnsubscribeLinks.unsubscribe} unsubscribes. */
export interface UnsubscribeRequest {
  /**
   * Unsubscribe from everything, even from a topic broadcast's link (the page's second button).
   * @default false: a topic broadcast's link unsubscribes from its topic only
   */
  everything?: boolean;
  /** The client's address and user agent, kept in the consent record. */
  ip?: string | null;
  userAgent?: string | null;
  /** The consent record's source. @default 'one-click' ('unsubscribe-page' with `everything`) */
  source?: string;
}
