/**
 * The records of the event outbox and of webhook delivery (docs/architecture.md, flow 5). Like
 * `records.ts`, a store persists them as they are and derives nothing.
 */
import type { DomainFinding } from './domain-types.js';
import type { PauseRule, PauseScope } from './pause-records.js';
import type { DomainState, MailingKind } from './records.js';

/** Every event type, by the names Resend uses (so people recognise them). */
export const EVENT_TYPES = [
  'email.sent',
  'email.delivery_delayed',
  'email.failed',
  'email.bounced',
  'email.complained',
  'email.suppressed',
  'email.opened',
  'email.clicked',
  'email.received',
  'email.replied',
  'contact.unsubscribed',
  'contact.topics_changed',
  'contact.groups_changed',
  'contact.subscribed',
  'contact.confirmed',
  'broadcast.completed',
  'broadcast.cancelled',
  'broadcast.paused',
  'broadcast.resumed',
  'domain.verified',
  'domain.failed',
  'automation.run_started',
  'automation.run_completed',
  'automation.run_exited',
  'automation.webhook',
] as const;

/** One event type. */
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The `data` of an event: what happened, to which mailing and delivery. Never a message body. Optional
 * members appear only for the types that carry them (a bounce's class, a click's URL...).
 */
export interface EventData {
  /** The event's id (`evt_...`), stable across webhook retries and `GET /events`. */
  event_id: string;
  project_id: string;
  /** The mailing: a single message or a broadcast. */
  mailing?: { ref: string; kind: MailingKind };
  /** The delivery (one recipient of the mailing). */
  delivery?: { id: string; message_id: string; address: string; attempts: number };
  /** The address concerned (for `contact.unsubscribed`, which has no delivery). */
  address?: string;
  /** The relay's or provider's answer, when there is one (SMTP code and text). */
  response?: string | null;
  /** Why it failed, was delayed or was not sent. */
  error?: string | null;
  /** `email.delivery_delayed`: when the next attempt is due (ISO 8601). */
  next_attempt_at?: string;
  /** `email.bounced`: why it bounced, the effect's class, and what the report or reply said. */
  bounce?: BounceData;
  /** `email.clicked`: the link's URL. */
  url?: string;
  /** `email.opened` / `email.clicked`: made by a machine (a privacy proxy, a link scanner). */
  machine?: boolean;
  /** `broadcast.completed`: the final counts by delivery status. */
  counts?: Record<string, number>;
  /** `email.suppressed`: why the address gets no mail (`suppressed` or `unsubscribed`). */
  reason?: string;
  /** `contact.unsubscribed`: the broadcast whose link was used. */
  broadcast_ref?: string;
  /** `contact.topics_changed`: the topics whose state changed, each with its state after (null: the default). */
  topics?: Array<{ key: string; state: 'subscribed' | 'unsubscribed' | 'pending' | null }>;
  /** `contact.groups_changed`: the groups (by ref) the contact was added to (`member: true`) or removed from. */
  groups?: Array<{ ref: string; member: boolean }>;
  /** `contact.subscribed` / `contact.confirmed`: the form signed up through, its topic and group. */
  form_ref?: string;
  topic?: string | null;
  group?: string | null;
  /** `contact.subscribed`: true when the signup waits for its confirmation (double opt-in). */
  pending?: boolean;
  /** `contact.unsubscribed` / `contact.topics_changed`: where the change came from (`api`, `one-click`, ...). */
  source?: string;
  /**
   * `domain.verified` / `domain.failed`: the sending domain, its state before and after, and the findings
   * of the check (`domain.failed`: the records missing or wrong, each with the value to publish).
   */
  domain?: {
    name: string;
    state: DomainState;
    previous_state: DomainState;
    findings: DomainFinding[];
  };
  /**
   * `broadcast.paused` / `broadcast.resumed`: what was paused or resumed (a broadcast, the project's
   * sending, a destination), by whom, why, and for the reputation guard the rule with its figures and
   * window.
   */
  pause?: PauseEventData;
  /**
   * `automation.run_started` / `automation.run_completed` / `automation.run_exited`: the run, its workflow
   * and version, the event that started it, and how it ended (`completed`, `exit-step`,
   * `exit-event:<name>`, `workflow-deleted`, `failed: …`).
   */
  automation?: {
    workflow_id: string;
    run_id: string;
    version: number;
    trigger_event_id: string;
    reason?: string;
    /**
     * `automation.webhook`: the step that called, and the payload the definition gave it;
     * `contact.groups_changed`: the update-contact step that changed them.
     */
    step?: string;
    payload?: Record<string, unknown>;
  };
  /**
   * `email.received` / `email.replied`: the message a receiving route took, as the `onInbound` handler
   * gets it (`InboundMail`: parsed fields, attachments' metadata, authentication results, stripped reply).
   */
  inbound?: Record<string, unknown>;
  /** A test event sent from the dashboard or the API. */
  test?: boolean;
}

/**
 * The bounce of an `email.bounced` event. `class` says what the bounce does to the address:
 * `recipient-hard` (the address is bad: suppressed), `soft` (counted; suppressed after N in a row) or
 * `sender-side` (the sender was refused: the address is never suppressed for it).
 */
export interface BounceData {
  /** The reason, by the taxonomy of the README (Sisimai's names: `userunknown`, `authfailure`...). */
  reason: string;
  class: 'recipient-hard' | 'soft' | 'sender-side';
  /** The RFC 3463 status (`5.7.26`), when known. */
  status: string | null;
  /** The remote server's or provider's words (`smtp; 550 5.7.26 ...`), when known. */
  diagnostic: string | null;
  /** Where it was learnt: `dsn`, `text-bounce`, `ses`, `mailgun`, or `smtp` (refused at send time). */
  source: string;
  /** The recipient the report named, when it is not the delivery's address (a forward, an alias). */
  reported_address?: string;
  /** The returned copy's Message-ID, when it is not the delivery's (a forwarder, a list). */
  reported_message_id?: string;
}

/**
 * One event, written in the same store transaction as the change that caused it (an outbox). Its public
 * form (`GET /events`, the webhook body) is `{ type, created_at, data }`.
 */
export interface EventRecord {
  /** `evt_` + time-ordered id: listings page by it. */
  id: string;
  projectId: string;
  type: EventType;
  /** The mailing's ref, when the event concerns one (filter of `listEvents`). */
  mailingRef: string | null;
  /** The delivery's id, when the event concerns one (a delivery's events on the dashboard). */
  deliveryId: string | null;
  /** The address concerned, when there is one (filter of `listEvents`). */
  address: string | null;
  data: EventData;
  createdAt: Date;
}

/** Where events of a project are POSTed. Unique by id. */
export interface WebhookEndpointRecord {
  /** `wh_...` */
  id: string;
  projectId: string;
  url: string;
  /** The event types it receives; null for all of them. */
  events: EventType[] | null;
  /**
   * The signing secret, `whsec_` + base64 of 24 random bytes. Kept as is: signing needs it (it is
   * shown to the user once, never listed again).
   */
  secret: string;
  enabled: boolean;
  /** Why it was disabled (by the user, or automatically after failing everything for days). */
  disabledReason: string | null;
  /** Since when every attempt has failed (null while it is healthy). */
  failingSince: Date | null;
  /**
   * Until when its circuit is open (null: closed): after consecutive failures the sender stops POSTing
   * to it, its pending messages wait until this time (not attempted, so no retry is spent), and a probe
   * then decides whether it closes or stays open longer. Kept here so that every process and the
   * dashboard see it.
   */
  circuitOpenUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** State of a webhook message. `delivered` and `failed` are final until a replay. */
export type WebhookMessageStatus = 'pending' | 'sending' | 'delivered' | 'failed';

/**
 * One event to POST to one endpoint (a fan-out row of the outbox). Its id is the `webhook-id` header,
 * the same on every retry.
 */
export interface WebhookMessageRecord {
  /** `msg_...`: the `webhook-id`. */
  id: string;
  projectId: string;
  endpointId: string;
  eventId: string;
  eventType: EventType;
  /**
   * The request body, `{ type, created_at, data }` as JSON, fixed when the event is written: every retry
   * sends the same bytes (and the sender needs no join to find it).
   */
  payload: string;
  /**
   * Claimed in this order (within one, oldest `nextAttemptAt` first): 0, events of single messages and
   * everything else; 1, events of a broadcast's deliveries. So that while a large broadcast's events wait
   * behind its delivery ("mail first"), the events of a password reset sent meanwhile do not wait behind
   * them. The core sets it (`events/event-outbox.ts`); stores keep it and claim by it.
   */
  priority: WebhookPriority;
  status: WebhookMessageStatus;
  /** Attempts made so far (a claim counts one). */
  attempts: number;
  nextAttemptAt: Date;
  leaseExpiresAt: Date | null;
  /** Fencing token: incremented on every claim. */
  leaseToken: number;
  /** HTTP status of the last attempt (null: no answer, or never attempted). */
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The claim order of a webhook message: see `WebhookMessageRecord.priority`. */
export type WebhookPriority = 0 | 1;

/** Every {@link WebhookPriority}, in claim order. */
export const WEBHOOK_PRIORITIES: readonly WebhookPriority[] = [0, 1];

/** A webhook message handed to a sender by a claim. */
export interface ClaimedWebhookMessage extends WebhookMessageRecord {
  status: 'sending';
  leaseExpiresAt: Date;
}

/** One POST of a webhook message, as recorded. */
export interface WebhookAttemptRecord {
  id: string;
  projectId: string;
  endpointId: string;
  messageId: string;
  eventType: EventType;
  /** 1 for the first attempt of the message. */
  attempt: number;
  /** The HTTP status answered; null when there was no answer (refused, timed out, blocked). */
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  createdAt: Date;
}

/** What a sender records for a claimed webhook message. */
export interface WebhookOutcome {
  /** `pending`: retry at `nextAttemptAt`. */
  status: 'pending' | 'delivered' | 'failed';
  nextAttemptAt?: Date;
  statusCode: number | null;
  error: string | null;
  now: Date;
}

/**
 * Events and their webhook messages, written with the state change that caused them, in one
 * transaction (see `EventStore`).
 */
export interface OutboxWrite {
  events: EventRecord[];
  messages: WebhookMessageRecord[];
}

/** Filters of `EventStore.listEvents`. */
export interface EventFilter {
  types?: readonly EventType[];
  mailingRef?: string;
  address?: string;
  deliveryId?: string;
}

/** The `pause` member of `broadcast.paused` and `broadcast.resumed` events. */
export interface PauseEventData {
  scope: PauseScope;
  /** The broadcast's ref, the project's id, or the destination's name. */
  target: string;
  /** `destination`: the recipient domains held back. */
  domains?: string[];
  /** Who paused or resumed: an operator, or the reputation guard (its pauses, and their timed ends). */
  by: 'operator' | 'guard';
  reason: string | null;
  /** The guard's rule and its figures (counts, attempts, rate, threshold, window). */
  rule?: PauseRule | null;
  /** When a timed pause ends by itself (ISO 8601). */
  until?: string | null;
}
