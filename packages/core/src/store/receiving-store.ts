import type { OutboxWrite } from './event-records.js';

/**
 * Where a receiving route hands a message: a webhook endpoint of the project (an `email.received` event
 * POSTed to that endpoint only, signed and retried by the webhook sender), the engine's `onInbound`
 * handler, or nowhere (kept in the store only, for the API to list).
 */
export type ReceivingDestination =
  | { kind: 'webhook'; endpointId: string }
  | { kind: 'handler' }
  | { kind: 'store' };

/**
 * A receiving route (issue 40): mail to `pattern@domain` taken for the project and handed to
 * `destination`. `pattern` is a local part (`support`), a prefix with a wildcard (`reply+*`) or `*` (the
 * domain's catch-all). Unique by id, and by (domain, pattern) across every project: one address has one
 * owner.
 */
export interface ReceivingRouteRecord {
  /** `rte_...` */
  id: string;
  projectId: string;
  /** The receiving domain, lower-cased. */
  domain: string;
  pattern: string;
  destination: ReceivingDestination;
  createdAt: Date;
}

/** One message taken by a route: the envelope, what the parse and the checks found. */
export interface ReceivedMessageRecord {
  /** `inm_...`: time-ordered, listings page by it. */
  id: string;
  projectId: string;
  routeId: string;
  /** The envelope's sender (empty for the null sender). */
  envelopeFrom: string;
  /** The envelope's recipients the route took. */
  envelopeTo: string[];
  /** The connecting client's IP address. */
  remoteAddress: string;
  /** The parsed message and its authentication results, as the webhook and the handler see them (JSON). */
  message: Record<string, unknown>;
  createdAt: Date;
  /**
   * Whose mail it is, for erasure: the header From's address, else the envelope sender, folded (lower
   * case); empty for the null sender without a From.
   */
  fromAddress: string;
  /** When the retention sweep deletes it with its raw bytes; null: kept until deleted otherwise. */
  expiresAt: Date | null;
}

/**
 * A project's receiving settings (issue 40), each null for the engine's default: how long received mail
 * is kept, the largest message its routes take, and the domain of its per-delivery reply addresses.
 */
export interface ReceivingSettingsRecord {
  projectId: string;
  /** Days a received message and its raw bytes (attachments included) are kept. */
  retentionDays: number | null;
  /** Largest message, in bytes, the project's routes take (552 past it). */
  maxMessageBytes: number | null;
  /**
   * When set, sent mail without a Reply-To of its own gets `reply+<delivery id>@<replyDomain>` (a route of
   * the project takes those addresses), and a message to that address is linked to the delivery.
   */
  replyDomain: string | null;
  updatedAt: Date;
}

/** A page of received messages: newest first, strictly before the id `before`. */
export interface ReceivedPageOptions {
  before?: string | null;
  limit: number;
}

/**
 * Receiving mail for the app (issue 40): routes per receiving domain and the messages they took. Every rule
 * of `Store` (store.ts) applies.
 */
export interface ReceivingStore {
  /** Insert a route. `CONFLICT` when its (domain, pattern) is taken, by any project. */
  createReceivingRoute(route: ReceivingRouteRecord): Promise<void>;
  /** The project's routes, by domain then pattern. */
  listReceivingRoutes(projectId: string): Promise<ReceivingRouteRecord[]>;
  /** Every project's routes on one domain (lower-cased), by pattern: what the listener matches against. */
  findReceivingRoutes(domain: string): Promise<ReceivingRouteRecord[]>;
  /** Remove a route of the project; true if it existed. Messages it took are kept. */
  deleteReceivingRoute(projectId: string, id: string): Promise<boolean>;
  /**
   * Insert a received message, its raw bytes (`raw`, when given: the whole message as received, so its
   * attachments too) and `outbox` (its events), in one transaction. A store may keep the bytes in pieces;
   * {@link readReceivedRaw} returns them whole.
   */
  saveReceivedMessage(message: ReceivedMessageRecord, outbox?: OutboxWrite, raw?: Uint8Array): Promise<void>;
  /** The raw bytes of a received message of the project, as saved; undefined when none are kept. */
  readReceivedRaw(projectId: string, id: string): Promise<Uint8Array | undefined>;
  /**
   * Delete at most `limit` received messages, of any project, whose `expiresAt <= now`, with their raw
   * bytes; returns how many. A caller that wants them all calls again until it gets less than `limit`.
   */
  pruneReceivedMessages(now: Date, limit: number): Promise<number>;
  /** The project's receiving settings; undefined when never set (every default applies). */
  getReceivingSettings(projectId: string): Promise<ReceivingSettingsRecord | undefined>;
  /** Insert or replace the project's receiving settings. */
  putReceivingSettings(settings: ReceivingSettingsRecord): Promise<void>;
  /** A received message of the project by id. */
  getReceivedMessage(projectId: string, id: string): Promise<ReceivedMessageRecord | undefined>;
  /** The project's received messages, newest first. */
  listReceivedMessages(projectId: string, page: ReceivedPageOptions): Promise<ReceivedMessageRecord[]>;
}
