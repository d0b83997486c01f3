import type { AuthContext } from '../context/auth-context.js';
import type { EventPayload } from '../events/event-outbox.js';
import type {
  EventRecord,
  EventType,
  WebhookAttemptRecord,
  WebhookEndpointRecord,
  WebhookMessageRecord,
  WebhookMessageStatus,
} from '../store/event-records.js';
import type { Page } from '../store/paging.js';

/** Settings of webhook delivery (`createMailroom({ webhooks })`). */
export interface WebhookOptions {
  /**
   * Run the sender loop with the worker (`mailroom.worker.start()`): it claims due webhook messages and
   * POSTs them. Several processes may run it on one store. @default true
   */
  send?: boolean;
  /**
   * Waits between attempts, in milliseconds: after the first failure the second attempt waits the first
   * entry, and so on; after the last, the message is `failed`. Like Svix's schedule.
   * @default [5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h]
   */
  retryScheduleMs?: number[];
  /** An endpoint whose every attempt has failed for this long is disabled. @default 5 days */
  disableAfterMs?: number;
  /**
   * POSTs in flight at once per process, shared evenly by the endpoints that have messages to send (each
   * gets `concurrency / endpoints`, at least 1): a slow or hanging endpoint holds only its own share.
   * @default 32
   */
  concurrency?: number;
  /** Time of one POST, answer included. @default 10_000 */
  timeoutMs?: number;
  /**
   * Bytes of an answer's body read at most, only to keep the connection for the next POST: the status
   * line is the answer (a 2xx is delivered, whatever its body). Past them, or when its `Content-Length`
   * says more, the connection is dropped at once, unread. @default 4096
   */
  maxResponseBytes?: number;
  /** Lease of a claimed message. @default 60_000 */
  leaseMs?: number;
  /** Poll interval of an idle sender. @default 250 */
  pollMs?: number;
  /**
   * Mail first: while the delivery worker of this process has deliveries in flight, this process POSTs at
   * most this many webhook messages per second (0: no cap), in one burst every 500 ms (half the rate at
   * a time: a POST made alone costs several times the CPU), so that events of a large broadcast do not
   * take the CPU its delivery needs; they catch up at full speed once it is idle. Events are never
   * dropped, only later. @default 100
   */
  busyRatePerSecond?: number;
  /**
   * Failed attempts in a row (errors, timeouts, any answer but a 2xx) that open an endpoint's circuit:
   * nothing more is sent to it, its pending messages wait (not attempted: no retry is spent) and claims
   * pass over them, until one probe succeeds. @default 5
   */
  circuitFailures?: number;
  /** How long a circuit first stays open; each failed probe doubles it. @default 5_000 */
  circuitOpenMs?: number;
  /** How long a circuit stays open at most between probes. @default 300_000 */
  circuitMaxOpenMs?: number;
}

/**
 * The state of an endpoint: `healthy` (its circuit closed), `circuit_open` (nothing sent until
 * `circuitOpenUntil`, then a probe; once that time has passed, the probe is due or on its way) or
 * `disabled` (by the user, or after failing every attempt for `disableAfterMs`).
 */
export type WebhookEndpointState = 'healthy' | 'circuit_open' | 'disabled';

/** An endpoint as shown: never its secret; with its state. */
export type WebhookEndpointView = Omit<WebhookEndpointRecord, 'secret' | 'projectId' | 'updatedAt'> & {
  state: WebhookEndpointState;
};

/** What `webhooks.add` answers: the endpoint, and its signing secret, shown this once. */
export interface AddedWebhookEndpoint {
  endpoint: WebhookEndpointView;
  /** `whsec_...`: verify the `webhook-signature` of every request with it (Standard Webhooks). */
  secret: string;
}

/** An event as `listEvents` answers it: the webhook body plus the event's id. */
export type EventView = EventPayload & { id: string };

/** Options of `listEvents`. */
export interface ListEventsOptions {
  /** The `next` of the previous page (an event id). */
  after?: string;
  types?: EventType[];
  mailingRef?: string;
  address?: string;
  /** @default 100, at most 1000 */
  limit?: number;
}

/** A webhook message as shown on the dashboard. */
export type WebhookMessageView = Omit<WebhookMessageRecord, 'projectId' | 'leaseToken' | 'leaseExpiresAt'>;

/** The webhook endpoints of a project, and what was sent to them. */
export interface MailroomWebhooks {
  /**
   * Add an endpoint: `url` must be http(s) and pass the guarded fetcher's address checks (a private,
   * loopback or metadata address is `FETCH_REFUSED` unless allow-listed); `events` limits the types it
   * receives (default all). Answers the signing secret once.
   */
  add(
    auth: string | AuthContext,
    input: { url: string; events?: string[]; enabled?: boolean },
  ): Promise<AddedWebhookEndpoint>;
  /** The project's endpoints, oldest first. */
  list(auth: string | AuthContext): Promise<WebhookEndpointView[]>;
  /** Remove an endpoint; `NOT_FOUND` when the project has none with this id. */
  remove(auth: string | AuthContext, id: string): Promise<void>;
  /** Replace an endpoint's signing secret; answers the new one, once. */
  rotateSecret(auth: string | AuthContext, id: string): Promise<{ secret: string }>;
  /** Enable or disable an endpoint (enabling clears an automatic disable). */
  setEnabled(auth: string | AuthContext, id: string, enabled: boolean): Promise<WebhookEndpointView>;
  /** Queue a test event (`email.sent` with `data.test: true`) for one endpoint; answers its message id. */
  sendTest(auth: string | AuthContext, id: string): Promise<{ messageId: string }>;
  /** Send a delivered or failed message again (same `webhook-id`); `NOT_FOUND` otherwise. */
  replay(auth: string | AuthContext, messageId: string): Promise<void>;
  /** Recent messages, newest first. */
  messages(
    auth: string | AuthContext,
    filter?: { endpointId?: string; status?: WebhookMessageStatus; limit?: number },
  ): Promise<WebhookMessageView[]>;
  /** Recent attempts, newest first, with status code and latency. */
  attempts(
    auth: string | AuthContext,
    filter?: { endpointId?: string; messageId?: string; limit?: number },
  ): Promise<WebhookAttemptRecord[]>;
  /** Send every message due now and wait for the answers (tests and scripts; the worker runs the loop). */
  drain(): Promise<void>;
  /** The webhook queue of every project (no secret: for metrics). */
  queue(): Promise<{ oldestPendingAgeMs: number | null }>;
}

/** `listEvents` of the engine. */
export type ListEvents = (
  auth: string | AuthContext,
  options?: ListEventsOptions,
) => Promise<Page<EventView>>;

/** Re-exported for the views. */
export type { EventRecord };
