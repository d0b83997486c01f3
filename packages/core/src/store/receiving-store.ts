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
  /** Insert a received message and write `outbox` (its events), in one transaction. */
  saveReceivedMessage(message: ReceivedMessageRecord, outbox?: OutboxWrite): Promise<void>;
  /** A received message of the project by id. */
  getReceivedMessage(projectId: string, id: string): Promise<ReceivedMessageRecord | undefined>;
  /** The project's received messages, newest first. */
  listReceivedMessages(projectId: string, page: ReceivedPageOptions): Promise<ReceivedMessageRecord[]>;
}
