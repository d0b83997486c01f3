import type {
  ClaimedWebhookMessage,
  EventFilter,
  EventRecord,
  OutboxWrite,
  WebhookAttemptRecord,
  WebhookEndpointRecord,
  WebhookMessageRecord,
  WebhookMessageStatus,
  WebhookOutcome,
  WebhookPriority,
} from './event-records.js';
import type { PageOptions } from './paging.js';

/**
 * The event outbox and the webhook queue: the role of a `Store` behind `mailroom.listEvents`, the
 * webhook endpoints and the webhook sender loop.
 *
 * Events are written by the core together with the change that causes them, never on their own after
 * it: `completeDeliveries` (each outcome's `outbox`), `setMailingStatus` and
 * `completeMailingIfSettled` (their `outbox` argument), `setProfileStatus` (its `outbox`). Each of those
 * writes the outbox's events and webhook messages in the SAME transaction as its own change, and only
 * when that change is written (a fenced-out outcome or a compare-and-set that did not change writes no
 * event). So a crash can never keep the change and lose its event, or the reverse.
 *
 * Webhook messages are claimed with leases like deliveries: a message is in flight in at most one
 * sender per lease, and after a crash only in-flight messages are sent twice (with the same id, the
 * `webhook-id`).
 */
export interface EventStore {
  /** Insert events and webhook messages on their own (test events; events with no other change). */
  insertOutbox(outbox: OutboxWrite): Promise<void>;
  /**
   * A project's events matching `filter` (every given filter applies), ordered by id ascending,
   * strictly after `page.after` (an event id).
   */
  listEvents(projectId: string, filter: EventFilter, page: PageOptions): Promise<EventRecord[]>;

  /** Insert a webhook endpoint. `CONFLICT` if its id exists. */
  addWebhookEndpoint(endpoint: WebhookEndpointRecord): Promise<void>;
  /** A project's webhook endpoints, oldest first. */
  listWebhookEndpoints(projectId: string): Promise<WebhookEndpointRecord[]>;
  /** An endpoint by id (sender use, not scoped: the core checks the project of what it shows). */
  getWebhookEndpoint(id: string): Promise<WebhookEndpointRecord | undefined>;
  /**
   * Change an endpoint of the project: the fields given in `patch`, and `updatedAt` to `now`. Returns
   * false (nothing written) when the project has no such endpoint.
   */
  updateWebhookEndpoint(
    projectId: string,
    id: string,
    patch: Partial<Pick<WebhookEndpointRecord, 'url' | 'events' | 'secret' | 'enabled' | 'disabledReason'>>,
    now: Date,
  ): Promise<boolean>;
  /**
   * Record an endpoint's health: `failingSince` null clears it (an attempt succeeded); a date sets it only
   * if it is null (the first failure of a run). Returns the stored value afterwards (undefined: no such
   * endpoint).
   *
   * Race guarantee: of concurrent calls setting a date, the first one's date is kept.
   */
  setWebhookEndpointHealth(id: string, failingSince: Date | null): Promise<Date | null | undefined>;
  /**
   * Open or close an endpoint's circuit. A date opens it until then: sets `circuitOpenUntil` and, in the
   * same transaction, moves every `pending` message of the endpoint due before it to that date (their
   * attempts unchanged), so that no claim hands them out meanwhile. Null closes it (clears the field;
   * messages keep their times). Returns false when there is no such endpoint.
   *
   * Race guarantee: the field and the deferral are written together or not at all.
   */
  setWebhookCircuit(id: string, openUntil: Date | null): Promise<boolean>;
  /** Remove an endpoint of the project; true if one was removed. Its messages stay, for the record. */
  removeWebhookEndpoint(projectId: string, id: string): Promise<boolean>;

  /**
   * Claim up to `limit` due webhook messages: `pending` with `nextAttemptAt <= now`, or `sending` whose
   * lease expired, priority 0 first and within it oldest `nextAttemptAt` first, none of an endpoint in
   * `skipEndpoints` (and only of `priority` when given). Each becomes
   * `sending` with `leaseExpiresAt = now + leaseMs`, `leaseToken + 1` and `attempts + 1`.
   *
   * Race guarantee: a message is returned by at most one call per lease, whatever the number of
   * concurrent claimers (processes included, when `capabilities.multiProcess`).
   */
  claimWebhookMessages(options: {
    now: Date;
    limit: number;
    leaseMs: number;
    /**
     * Endpoints whose messages are left where they are (the sender's endpoints with an open circuit or
     * with as many messages in hand as they can take). A few ids: a claim may pass over their due rows.
     */
    skipEndpoints?: readonly string[];
    /** Only messages of this priority (a sender's small claim for the urgent ones). */
    priority?: WebhookPriority;
  }): Promise<ClaimedWebhookMessage[]>;
  /**
   * Record the outcomes of attempts. Each item is fenced: written only if the message is still `sending`
   * with exactly `leaseToken` (the result says, in input order, whether each was). A written item sets the
   * message's status, `lastStatusCode`, `lastError`, `updatedAt` (and `nextAttemptAt` for `pending`),
   * clears the lease, and inserts its `attempt` record, in one transaction with the update.
   */
  completeWebhookMessages(
    items: ReadonlyArray<{
      id: string;
      leaseToken: number;
      outcome: WebhookOutcome;
      attempt: WebhookAttemptRecord | null;
    }>,
  ): Promise<boolean[]>;
  /**
   * Hand claimed messages back unsent (their endpoint's circuit opened, or the lease would end before a
   * POST could): each still `sending` with exactly `leaseToken` becomes `pending` at `nextAttemptAt`,
   * its lease cleared and `attempts - 1` (the claim's attempt was not made); `lastStatusCode`,
   * `lastError` and `updatedAt` are kept, and no attempt is recorded. Returns, in input order, whether
   * each fence held.
   */
  releaseWebhookMessages(
    items: ReadonlyArray<{ id: string; leaseToken: number; nextAttemptAt: Date }>,
  ): Promise<boolean[]>;
  /**
   * Replay: a `delivered` or `failed` message of the project becomes `pending`, due at `now`. Returns
   * whether it changed (a message pending or in flight is left alone).
   */
  requeueWebhookMessage(projectId: string, id: string, now: Date): Promise<boolean>;
  /** A project's webhook messages, newest first (by `updatedAt`), optionally of one endpoint or status. */
  listWebhookMessages(
    projectId: string,
    filter: { endpointId?: string; status?: WebhookMessageStatus; limit: number },
  ): Promise<WebhookMessageRecord[]>;
  /** A project's recorded attempts, newest first, optionally of one endpoint or message. */
  listWebhookAttempts(
    projectId: string,
    filter: { endpointId?: string; messageId?: string; limit: number },
  ): Promise<WebhookAttemptRecord[]>;
  /**
   * The state of the webhook queue (every project): the `createdAt` of the oldest message not yet
   * `delivered` or `failed`, and the earliest `nextAttemptAt` of a `pending` one (leases that will expire
   * are not counted).
   */
  webhookQueueState(): Promise<{ oldestPendingAt: Date | undefined; nextDueAt: Date | undefined }>;
}
