import type {
  BroadcastResult,
  IdempotencyOptions,
  RequestOptions,
  SendBatchResult,
  SendResult,
} from '../accept/accept-options.js';
import type { ActivityChart, ActivityQuery } from '../admin/activity-series.js';
import type { MailingView } from '../admin/mailing-view.js';
import type { MessageStatusView } from '../admin/message-status-view.js';
import type { MailroomAudience } from '../audience/audience-types.js';
import type { Clock, Logger, MailroomLimits } from '../base/base-types.js';
import type { AuthContext } from '../context/auth-context.js';
import type { StoreHealth } from '../context/store-health.js';
import type { DestinationOptions } from '../delivery/destinations.js';
import type { WorkerOptions } from '../delivery/worker-options.js';
import type { GuardedFetcherOptions } from '../fetch/fetch-types.js';
import type { BounceCountOptions, DomainBounces } from '../inbound/bounce-counts.js';
import type { BouncesOptions } from '../inbound/bounces-options.js';
import type { MailroomInbound } from '../inbound/inbound-types.js';
import type { NotificationOptions } from '../inbound/provider-notifications.js';
import type { MailroomKeys } from '../keys/key-types.js';
import type { ReputationGuardOptions } from '../pauses/guard-options.js';
import type { PauseView } from '../pauses/pause-control.js';
import type {
  MailroomSenders,
  MailroomSuppressions,
  MailroomTemplates,
} from '../resources/resource-types.js';
import type { RetentionOptions } from '../retention/retention-options.js';
import type { DeliveryRecord, DeliveryStatus, InboundSignalRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { Transport } from '../transport/transport.js';
import type { PreferencePage, PreferenceSave, PreferenceSaved } from '../unsubscribe/preference-types.js';
import type {
  UnsubscribeOptions,
  UnsubscribeRequest,
  UnsubscribeTarget,
} from '../unsubscribe/unsubscribe-options.js';
import type { ListEvents, MailroomWebhooks, WebhookOptions } from '../webhooks/webhook-types.js';
import type { MailroomEvents } from './engine-events.js';

export type * from '../accept/accept-options.js';
export type * from '../admin/engine-views.js';
export type * from '../admin/mailing-view.js';
export type * from '../admin/message-status-view.js';
export type * from '../audience/audience-types.js';
export type * from '../base/base-types.js';
export type * from '../consent/consent-types.js';
export type * from '../context/auth-context.js';
export type { WorkerOptions } from '../delivery/worker-options.js';
export type * from '../domains/domains-options.js';
export type * from '../inbound/bounces-options.js';
export type * from '../keys/key-types.js';
export type * from '../resources/resource-types.js';
export type * from '../retention/retention-options.js';
export type { SignupEvents } from '../signup/signup-events.js';
export type * from '../signup/signup-types.js';
export type * from '../tracking/tracking-options.js';
export type * from '../unsubscribe/preference-types.js';
export type * from '../unsubscribe/unsubscribe-options.js';
export type * from '../webhooks/webhook-types.js';
export type * from './engine-events.js';

import type { MailroomAdmin, MailroomReads } from '../admin/admin-types.js';
import type { AutomationsEngineOptions, AutomationsFacade } from '../automations/automation-types.js';
import type { ConsentFacade } from '../consent/consent-types.js';
import type { MailroomWorker } from '../delivery/worker-api.js';
import type { DomainsEngineOptions, DomainsFacade } from '../domains/domains-facade.js';
import type { ReceivingEngineOptions } from '../receiving/receiving-options.js';
import type { ReceivingFacade } from '../receiving/receiving-types.js';
import type { SignupEngineOptions, SignupFacade } from '../signup/signup-types.js';
import type { TrackingEngineOptions, TrackingFacade } from '../tracking/tracking-facade.js';

export type * from '../admin/admin-types.js';
export type * from '../delivery/worker-api.js';
export type * from '../domains/domains-facade.js';
export type * from '../tracking/tracking-facade.js';

/** Options of {@link createMailroom}. */
export interface MailroomOptions
  extends TrackingEngineOptions,
    DomainsEngineOptions,
    AutomationsEngineOptions,
    SignupEngineOptions,
    ReceivingEngineOptions {
  store: Store;
  transport: Transport;
  clock?: Clock;
  logger?: Logger;
  limits?: Partial<MailroomLimits>;
  worker?: WorkerOptions;
  /**
   * A missing variable fails that recipient's delivery with an error naming the variable, instead of
   * rendering empty. @default false
   */
  strictVariables?: boolean;
  /**
   * Template previews (`templates.preview`, the dashboard's) render on a thread of their own, never on the
   * main thread nor on the delivery render threads, one at a time with the projects taking turns.
   * `msPerMinute`: render time each project may spend on previews per minute; over it, its previews get
   * `RATE_LIMITED` (429) with `retryAfter` until its budget refills. Sends are charged to the same budget
   * for what each render takes past 20 ms; a project whose render runs long renders on a slow lane of its
   * own, and over its budget its deliveries wait (`queued`, due when it refills, the attempt not counted).
   * `hardLimitMs`: longest one preview may hold the thread before it is stopped.
   * @default { msPerMinute: 10_000, hardLimitMs: 5_000 }
   */
  renderBudget?: { msPerMinute?: number; hardLimitMs?: number };
  /**
   * Default of `options.storeContent` when a broadcast does not say, and the setting of single messages.
   * While it is off, rendered content is never written to the store. @default false
   */
  storeContentDefault?: boolean;
  /**
   * The guarded fetcher used for attachments by URL, CSV sources, webhooks and SNS (docs/architecture.md,
   * invariant 7): caps, allow-list (`127.0.0.1:PORT` in tests), injectable DNS, byte-range size of CSV
   * downloads.
   * @default {} (public http(s) hosts only, 30 s, 25 MiB, 5 redirects, 1 MiB ranges)
   */
  fetch?: GuardedFetcherOptions;
  /**
   * One-click unsubscribe (RFC 8058): every broadcast message carries `List-Unsubscribe: <baseUrl/unsubscribe/TOKEN>`
   * and `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. Without it, messages carry no such headers.
   * @example { baseUrl: 'https://mail.example.com/api' }
   */
  unsubscribe?: UnsubscribeOptions;
  /**
   * Bounce and complaint handling (VERP): every message's envelope sender (`MAIL FROM`, so `Return-Path`)
   * becomes `b+<token>@<domain>`, where the token names the delivery and carries an HMAC; DSNs and ARF
   * reports mailed there (see `mailroom.inbound.receive` and the inbound SMTP listener) mark deliveries
   * `bounced` or `complained` and suppress the address. Without it the envelope sender is the From address.
   * @example { domain: 'bounces.acme.test' }
   */
  bounces?: BouncesOptions;
  /**
   * Bounce and complaint notifications of providers, taken by `mailroom.inbound.notification` (and the HTTP
   * adapter's `POST /inbound/ses` and `POST /inbound/mailgun`): Amazon SES through SNS (signatures checked
   * against Amazon's signing certificate) and Mailgun (webhook signing key).
   * @example { ses: { topicArns: ['arn:aws:sns:eu-west-1:123456789012:ses-feedback'] }, mailgun: { signingKey } }
   */
  notifications?: NotificationOptions;
  /** Idempotency keys of `send` and `broadcast`. */
  idempotency?: IdempotencyOptions;
  /** Retention of kept rendered content (see `storeContent`), swept by the running worker. */
  retention?: RetentionOptions;
  /**
   * The reputation guard, run with the worker: pauses a broadcast whose hard bounces, complaints or
   * sender-side refusals cross a rule, and a destination whose sender-side refusals do (for a while).
   * `false` turns it off. @default see `ReputationGuardOptions` (README, "Pause, resume and the reputation guard")
   */
  guard?: ReputationGuardOptions | false;
  /**
   * Webhook delivery of events: the sender loop runs with the worker unless `send` is false; the retry
   * schedule, timeouts and concurrency. @default see `WebhookOptions`
   */
  webhooks?: WebhookOptions;
  /**
   * Destinations ([README, "Deliverability: destinations and limits"]): each recipient's destination
   * group (the big mailbox providers by domain, optionally by MX host, else the domain itself) and the
   * limits per destination (per second, minute, hour, day; sends at once) that every worker on the store
   * keeps together. A destination that says "slow down" (421, 450, 4.7.x) slows only itself.
   * Unset: no limits per destination, and a slow-down slows the worker's whole transport.
   */
  destinations?: DestinationOptions;
  /**
   * Least time between two `broadcast:progress` events of one mailing, in milliseconds.
   * @default 1000
   */
  progressIntervalMs?: number;
}

/** The engine. */
export interface Mailroom
  extends MailroomReads,
    TrackingFacade,
    DomainsFacade,
    ConsentFacade,
    AutomationsFacade,
    SignupFacade,
    ReceivingFacade {
  readonly store: Store;
  readonly transport: Transport;
  readonly admin: MailroomAdmin;
  readonly worker: MailroomWorker;
  /** Bounces and complaints: inbound DSN/ARF messages and provider notifications. */
  readonly inbound: MailroomInbound;
  /**
   * Resolve a project key: its project, mode, and the key's id, scope and sender domains (`AuthContext.key`);
   * throws `UNAUTHORIZED` (one message for missing, malformed, unknown, revoked and expired keys). Notes the
   * key's last use, at most once a minute.
   */
  authenticate(secret: string | null | undefined): Promise<AuthContext>;
  /** Send one message (`POST /send/mail`). `auth` is a secret or an `AuthContext`. */
  send(auth: string | AuthContext, body: unknown, options?: RequestOptions): Promise<SendResult>;
  /**
   * Send up to 100 distinct messages in one call (`POST /send/mail/batch`): `{ items, mode? }`, each item
   * a single message's body plus `options.scheduleFor`, `headers`, `tags` and its own `idempotencyKey`.
   * `mode: 'strict'` (the default) refuses the whole batch with `VALIDATION_FAILED` if one item is bad
   * (an issue per problem, paths `items[i]...`); `'partial'` sends the good items and answers the bad
   * ones by index. The items are written in one store transaction where the store can. `options` as for
   * `send` (a batch idempotency key; the app's transaction).
   */
  sendBatch(auth: string | AuthContext, body: unknown, options?: RequestOptions): Promise<SendBatchResult>;
  /** Initial broadcast batch, or a later batch when the body carries `broadcastRef`. */
  broadcast(auth: string | AuthContext, body: unknown, options?: RequestOptions): Promise<BroadcastResult>;
  /** Webhook endpoints of the project, test events, replays, and what was sent. */
  readonly webhooks: MailroomWebhooks;
  /** The project's API keys: create with a scope and sender domains, list, revoke, rotate with a grace period. */
  readonly keys: MailroomKeys;
  /** The project's templates: list, get, create, new versions, remove, validate, preview (HTTP `/templates`). */
  readonly templates: MailroomTemplates;
  /** The project's sender identities: list, add, remove (HTTP `/senders`). */
  readonly senders: MailroomSenders;
  /** The project's suppression list: list and search, add, lift (HTTP `/suppressions`). */
  readonly suppressions: MailroomSuppressions;
  /** The project's audience over the API: groups, profiles, erasure requests and CSV imports. */
  readonly audience: MailroomAudience;
  /**
   * A single message by the `ref` `send` answered, or one recipient of any mailing by its RFC Message-ID:
   * each recipient's delivery status, attempts, events (oldest first) and bounce reports. Reads by key
   * only (cheap while a large broadcast sends). `NOT_FOUND` otherwise, a broadcast's ref included.
   */
  getMessage(auth: string | AuthContext, ref: string): Promise<MessageStatusView>;
  /**
   * The project's events (the outbox), oldest first, filtered by types, mailing ref or address, in pages:
   * `{ items, next }` like the other paged listings; pass `next` as `after` until it is `null` (HTTP
   * `GET /events` answers the same page as `data: { events, next }`, with the same cursor). Events of the
   * last moments may still appear behind a cursor already read (their transactions commit out of order):
   * push through webhooks for completeness.
   */
  listEvents: ListEvents;
  /** A broadcast or message of the project, with counts; `NOT_FOUND` otherwise. */
  getMailing(auth: string | AuthContext, ref: string): Promise<MailingView>;
  /** A mailing's deliveries, by address. */
  listDeliveries(
    auth: string | AuthContext,
    ref: string,
    page?: { after?: string; limit?: number; status?: DeliveryStatus },
  ): Promise<DeliveryRecord[]>;
  /**
   * The delivery of a mailing to one address (with its rendered `content` when the mailing keeps it);
   * `NOT_FOUND` when the mailing has none for that address.
   */
  getDelivery(auth: string | AuthContext, ref: string, address: string): Promise<DeliveryRecord>;
  /**
   * The bounces, complaints and delivery reports received about one delivery (DSNs, ARF reports, provider
   * notifications), oldest first. `NOT_FOUND` as for `getDelivery`.
   */
  listInboundSignals(
    auth: string | AuthContext,
    ref: string,
    address: string,
  ): Promise<InboundSignalRecord[]>;
  /**
   * The project's bounces by destination domain (of one mailing with `ref`, which is `NOT_FOUND` when
   * it is not the project's), the domains with the most bounces first: how many were recipient-hard,
   * soft and sender-side, and their reasons. Bounces read from DSNs and provider notifications and the
   * relay's refusals at send time all count. A domain with many sender-side refusals refuses the sender
   * (its DMARC, IP reputation, rate), not the recipients.
   */
  bouncesByDomain(auth: string | AuthContext, options?: BounceCountOptions): Promise<DomainBounces[]>;
  /**
   * Cancel a broadcast that is scheduled, queued or sending: its status becomes `cancelled`, it takes no more
   * batches (`BROADCAST_CLOSED`), its waiting deliveries become `skipped` and no worker claims any of them
   * again. Messages a worker is handing to the relay at that moment may still go out. Cancelling a cancelled
   * broadcast changes nothing; a completed or failed one is `BROADCAST_CLOSED`.
   */
  cancel(auth: string | AuthContext, ref: string): Promise<MailingView>;
  /**
   * Move a `scheduled` broadcast to another time (a `Date`, or an ISO-8601 string with `Z` or an offset): its
   * waiting deliveries and later batches follow. A time in the past sends now. A broadcast no longer
   * scheduled is `BROADCAST_CLOSED`.
   */
  reschedule(auth: string | AuthContext, ref: string, scheduleFor: Date | string): Promise<MailingView>;
  /**
   * Pause a broadcast: no worker claims its deliveries until it is resumed; deliveries in flight finish.
   * Writes `broadcast.paused` (by `operator`). Pausing a paused broadcast changes nothing.
   */
  pauseBroadcast(
    auth: string | AuthContext,
    ref: string,
    options?: { reason?: string },
  ): Promise<PauseView[]>;
  /**
   * Resume a paused broadcast exactly where it stopped: every delivery not sent is claimed at its own time
   * (scheduled ones keep theirs), none twice. Writes `broadcast.resumed`; a broadcast not paused changes
   * nothing.
   */
  resumeBroadcast(auth: string | AuthContext, ref: string): Promise<PauseView[]>;
  /** Pause the whole sending of the project (every mailing's deliveries), as `pauseBroadcast` does one. */
  pauseSending(auth: string | AuthContext, options?: { reason?: string }): Promise<PauseView[]>;
  /** Resume the project's sending. */
  resumeSending(auth: string | AuthContext): Promise<PauseView[]>;
  /**
   * Pause a destination of the project: a recipient domain (`gmail.com`), or a group of domains given in
   * `domains`; with `minutes`, it resumes by itself after them.
   */
  pauseDestination(
    auth: string | AuthContext,
    name: string,
    options?: { reason?: string; domains?: string[]; minutes?: number },
  ): Promise<PauseView[]>;
  /** Resume a destination of the project. */
  resumeDestination(auth: string | AuthContext, name: string): Promise<PauseView[]>;
  /** The project's pauses in force (each answer above returns them too). */
  listPauses(auth: string | AuthContext): Promise<PauseView[]>;
  /**
   * Clear the rendered content kept by `storeContent` (of every project) written before `before`, or more than
   * `olderThanDays` days ago, or, with neither, more than `retention.contentDays` days ago. Returns how many
   * deliveries it cleared.
   */
  pruneContent(options?: { before?: Date; olderThanDays?: number }): Promise<number>;
  /** Who a one-click unsubscribe token stands for, changing nothing; `NOT_FOUND` for a forged or unknown one. */
  resolveUnsubscribe(token: string): Promise<UnsubscribeTarget>;
  /**
   * Carry out a one-click unsubscribe. The link of a topic broadcast (issue 38) unsubscribes from that
   * topic only, unless `request.everything`; any other link gives the token's address the profile status
   * `unsubscribed` in its project, so no broadcast reaches it unless a source says `includeUnsubscribed`
   * (single messages still do). Every change is a consent record (with `request.ip` and `userAgent`).
   * Idempotent. `NOT_FOUND` for a forged or unknown token.
   */
  unsubscribe(token: string, request?: UnsubscribeRequest): Promise<UnsubscribeTarget>;
  /**
   * A contact's preference-centre link (what `{{ preferences_url }}` prints): `<unsubscribe.baseUrl>/preferences/<token>`,
   * the same for every message to it. `NOT_FOUND` when the engine has no `unsubscribe` option.
   */
  preferencesUrl(auth: string | AuthContext, address: string): Promise<string>;
  /**
   * What a preference link's page shows: the project's public topics with the contact's state, its brand
   * and the page's CSRF token. `NOT_FOUND` for a forged, altered or foreign token; `GONE` for an erased
   * contact.
   */
  openPreferences(token: string): Promise<PreferencePage>;
  /**
   * Save a preference page's form (its CSRF token, else `FORBIDDEN`), through the consent change path:
   * records of source `preference-page` with IP and user agent, `contact.topics_changed` and
   * `contact.unsubscribed` events. Errors as {@link openPreferences}.
   */
  savePreferences(token: string, input: PreferenceSave): Promise<PreferenceSaved>;
  /**
   * The project's activity over time, for charts: sent, deferred, failed, bounced by class, complained,
   * suppressed, opened and clicked (people and machines apart) per bucket, and a broadcast's pauses and
   * other turns as markers; of one mailing (`NOT_FOUND` for another project's) or of a destination's
   * domains when asked. Buckets of a minute up to six hours, an hour up to fourteen days, else a day.
   */
  activity(auth: string | AuthContext, query?: ActivityQuery): Promise<ActivityChart>;
  on<E extends keyof MailroomEvents>(event: E, listener: MailroomEvents[E]): () => void;
  /**
   * The store's state, for a health endpoint: `ok`, or `unavailable` / `storage-full` since when (the
   * first failed call of the outage). Probes the store (`Store.ping`) when it can, so an outage that
   * ended while nothing called the store reads `ok` again. Never throws.
   */
  health(): Promise<StoreHealth>;
  /** Stop the worker and close the transport and the store. */
  close(): Promise<void>;
}
