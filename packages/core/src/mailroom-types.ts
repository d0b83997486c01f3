import type {
  AudienceGroupView,
  DeliverySearch,
  DeliveryView,
  MailingProgress,
  Page,
  QueueDepth,
  SourceJobView,
  SourcePageEvent,
  TemplateSample,
  TemplateView,
} from './engine-views.js';
import type { GuardedFetcherOptions } from './fetch/fetch-types.js';
import type { InboundEffect, MailroomInbound } from './inbound/inbound-types.js';
import type { NotificationOptions } from './inbound/provider-notifications.js';
import type {
  AudienceGroupRecord,
  DeliveryRecord,
  DeliveryStatus,
  DkimConfig,
  InboundSignalRecord,
  InboundSignalSource,
  MailingKind,
  MailingRecord,
  MailingStatus,
  ProfileStatus,
  ProjectRecord,
  RenderedContent,
  SecretMode,
  SenderRecord,
  SuppressionReason,
  TemplateFormat,
  TemplateRecord,
} from './records.js';
import type { DeliveryCounts, DeliveryTracking, Store } from './store.js';
import type { Transport } from './transport.js';
import type { ListEvents, MailroomWebhooks, WebhookOptions } from './webhooks/webhook-types.js';

export type * from './engine-views.js';
export type * from './webhooks/webhook-types.js';

/** The project a request acts for, after authentication. */
export interface AuthContext {
  project: ProjectRecord;
  /** `sandbox` secrets are accepted and recorded, never delivered. */
  mode: SecretMode;
}

/** A minimal structured logger (pino-compatible). Never given secrets or message bodies. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Time source; tests inject a controllable one. */
export interface Clock {
  now(): Date;
}

/** Request limits. */
export interface MailroomLimits {
  /** @default 10 */
  recipientsPerMessage: number;
  /** @default 250 */
  recipientsPerBatch: number;
}

/** Worker settings. */
export interface WorkerOptions {
  /** Deliveries sent at once by one worker. @default 8 */
  concurrency?: number;
  /**
   * Deliveries claimed per round trip to the store, and the most a worker holds claimed without a
   * durable outcome: what a crash of the worker can send twice (with the same Message-ID). @default 100
   */
  batchSize?: number;
  /** Lease length of a claim. @default 60_000 */
  leaseMs?: number;
  /** Idle poll interval when nothing is due. @default 250 */
  pollMs?: number;
  /** Attempts before a transient failure becomes final. @default 8 */
  maxAttempts?: number;
  /** First retry delay; doubles each attempt, with jitter. @default 1_000 */
  retryBaseMs?: number;
  /** Cap of the retry delay. @default 300_000 */
  retryMaxMs?: number;
  /**
   * Messages per second across this worker, whatever the number of pooled connections (0 = unlimited):
   * no one-second window at the receiving server holds more (see `createRateLimiter`). @default 0
   */
  ratePerSecond?: number;
  /**
   * Messages per second of each project within this worker (0 = unlimited), as a number for every
   * project or a function of the project id. Applies on top of `ratePerSecond`. @default 0
   */
  projectRatePerSecond?: number | ((projectId: string) => number);
  /**
   * No retry is scheduled later than this long after the delivery first became due (accept time, or
   * `scheduleFor`); a transient failure past it is final, as after `maxAttempts` (0 = no limit).
   * @default 86_400_000 (one day)
   */
  maxAgeMs?: number;
  /**
   * After a 421 or 454 reply (the relay is overloaded or throttling), sending pauses this long and the
   * concurrency is halved; it recovers by one for each run of successes. Repeated slow-downs double
   * the pause, up to a minute. @default 5_000
   */
  throttlePauseMs?: number;
  /**
   * How long the worker stops sending when the transport says the account may not send for now
   * (`backpressure: 'pause'`, for example Amazon SES `SendingPausedException`): the failed deliveries wait
   * for the end of the pause without it counting against them, then one send probes; each pause in a
   * row doubles, up to 15 minutes. @default 60_000
   */
  transportPauseMs?: number;
  /**
   * Outcomes are recorded in bulk (`Store.completeDeliveries`): as soon as this many wait... @default 50
   */
  flushEvery?: number;
  /** ... or at the latest this long after the first of them, so progress stays live. @default 200 */
  flushMs?: number;
  /**
   * Worker threads that render recipients and build their MIME, leaving the main thread to the store
   * and the sockets (0 = render on the main thread). Used when the transport has a `composer` and
   * `sendRaw` (the SMTP, outbox and SES transports do); other transports render on the main thread.
   * `'auto'`: one thread where the process may use two cores or more (`os.availableParallelism()`),
   * none on one core. A thread costs CPU per message (the hand-over, a second heap) and about 30-50 MiB
   * of RSS, and pays where a second core is there to run it (BENCHMARKS.md, delivery-corpus).
   * The thread starts with the first delivery it builds. @default 'auto'
   */
  renderThreads?: number | 'auto';
}

/** Options of {@link createMailroom}. */
export interface MailroomOptions {
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
   * Default of `options.storeContent` when a broadcast does not say, and the setting of single messages.
   * While it is off, rendered content is never written to the store. @default false
   */
  storeContentDefault?: boolean;
  /**
   * The guarded fetcher used for attachments by URL and CSV sources (architecture invariant 7): caps,
   * allow-list (`127.0.0.1:PORT` in tests), injectable DNS, byte-range size of CSV downloads.
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
   * Open and click tracking, off unless configured (each of `opens` and `clicks` too). A mailing can turn
   * either off with `options.track`. See docs/tracking.md.
   * @example { baseUrl: 'https://mail.example.com/api', opens: true, clicks: true }
   */
  tracking?: TrackingOptions;
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
   * Webhook delivery of events: the sender loop runs with the worker unless `send` is false; the retry
   * schedule, timeouts and concurrency. @default see `WebhookOptions`
   */
  webhooks?: WebhookOptions;
  /**
   * Least time between two `broadcast:progress` events of one mailing, in milliseconds.
   * @default 1000
   */
  progressIntervalMs?: number;
}

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

/** Options of open and click tracking. */
export interface TrackingOptions {
  /**
   * Where the HTTP adapter is reachable from the recipients' mail clients, mount point included: links
   * become `<baseUrl>/t/c/<token>` and the pixel `<baseUrl>/t/o/<token>.gif`. A function is read once per
   * mailing and worker.
   */
  baseUrl: string | (() => string);
  /** Add a 1x1 pixel at the end of each HTML body; its first load is an `email.opened`. @default false */
  opens?: boolean;
  /** Rewrite each http(s) link of the HTML part to pass through `/t/c/`. @default false */
  clicks?: boolean;
  /**
   * The HMAC key of the tokens (at least 16 characters). Every process that sends or serves tracking links
   * needs the same one.
   * @default a random secret generated once and kept in the store (`Store.ensureSetting`)
   */
  secret?: string;
  /**
   * Clicks that arrive this soon after the message was sent and, together, cover every link of it are a
   * link scanner's (`machine: true`). Such early clicks are held that long before they are recorded.
   * @default 10_000
   */
  scannerWindowMs?: number;
  /** Longest a hit waits in this process before it is written, in a batch. @default 250 */
  flushMs?: number;
}

/** A mailing's open and click figures, people and machines apart. */
export interface TrackingView {
  /** Deliveries opened at least once, by class (one opened by both counts in both). */
  opens: { human: number; machine: number };
  /** Deliveries with at least one click, by class. */
  clicks: { human: number; machine: number };
  /** Every click, by class. */
  clickTotals: { human: number; machine: number };
  /** Links by the deliveries that clicked them, people first: most clicked first, at most `limit`. */
  topLinks: Array<{ index: number; url: string; human: number; machine: number }>;
}

/** Options of bounce and complaint handling. */
export interface BouncesOptions {
  /** The domain whose mail the inbound listener receives (its MX points at it): return paths are `b+<token>@<domain>`. */
  domain: string;
  /**
   * The HMAC key of the return-path tokens (at least 16 characters). Every process that sends or receives
   * bounces needs the same one.
   * @default a random secret generated once and kept in the store (`Store.ensureSetting`), shared by every
   * process on that store
   */
  secret?: string;
  /**
   * Soft bounces in a row (on distinct deliveries, with no delivery report in between) after which an
   * address is suppressed.
   * @default 3
   */
  softBounceLimit?: number;
}

/** Options of idempotency keys. */
export interface IdempotencyOptions {
  /** How long a key is remembered after its first request (per project). @default 86_400_000 (24 hours) */
  ttlMs?: number;
}

/** Retention of rendered content kept by `storeContent`. */
export interface RetentionOptions {
  /**
   * Kept content older than this many days is cleared by the running worker's sweep (and by
   * `pruneContent()` without arguments). @default undefined (kept until pruned explicitly)
   */
  contentDays?: number;
  /**
   * Events (`listEvents`, `GET /events`) and the webhook messages and attempts that carried them, older
   * than this many days, are deleted by the running worker's sweep; a webhook message not yet delivered
   * or failed is kept however old. `Infinity` keeps them all. Longer than the webhook retry schedule (about
   * 28 hours) and the 5 days after which a failing endpoint is disabled, so that what the dashboard shows
   * of a failing endpoint is still there. @default 30
   */
  eventDays?: number;
  /**
   * How often a running worker sweeps: kept content past `contentDays`, events past `eventDays`, and
   * expired idempotency keys.
   * @default 3_600_000 (one hour)
   */
  sweepEveryMs?: number;
}

/** Per-call options of `send` and `broadcast`. */
export interface RequestOptions {
  /**
   * An idempotency key (1 to 256 characters), kept per project for `idempotency.ttlMs`. A repeat of the same
   * call with the same key and body answers the first result (with `replayed: true`) and sends nothing again;
   * the same key with another body, or while the first call is still running, is `IDEMPOTENCY_CONFLICT`. A
   * call that fails does not use up its key.
   */
  idempotencyKey?: string;
}

/** What the HTTP layer tells about a tracking hit, used only to judge person or machine. */
export interface TrackingHitMeta {
  /** The `User-Agent` header. */
  userAgent?: string | undefined;
  /** The client address as the server saw it. */
  ip?: string | undefined;
  /** `GET` or `HEAD` (link scanners often check with `HEAD`). */
  method?: string | undefined;
}

/** Who a one-click unsubscribe token stands for. */
export interface UnsubscribeTarget {
  projectId: string;
  projectName: string;
  /** The normalized address. */
  address: string;
  /** The broadcast whose message carried the link. */
  broadcastRef: string;
}

/** What `send` answers. */
export interface SendResult {
  ref: string;
  status: MailingStatus;
  /** True when this is the first call's answer, replayed for a repeated idempotency key. */
  replayed?: boolean;
}

/** What `broadcast` answers, for the initial batch and later ones. */
export interface BroadcastResult {
  ref: string;
  status: MailingStatus;
  /** The batch just committed. */
  batch: { seq: number; recipients: number; inserted: number };
  /** True when this is the first call's answer, replayed for a repeated idempotency key. */
  replayed?: boolean;
}

/** A mailing with its delivery counts. */
export interface MailingView {
  ref: string;
  kind: MailingRecord['kind'];
  status: MailingStatus;
  subject: string;
  sender: MailingRecord['sender'];
  createdAt: Date;
  scheduleFor: Date | null;
  batchCount: number;
  counts: DeliveryCounts;
  /**
   * How late a scheduled mailing started, in milliseconds: its first sent message minus the time it was due
   * (`scheduleFor`, or the accept time if that was later). While nothing is sent yet and that time has passed
   * (no worker ran), how overdue it is now. A few hundred milliseconds is the worker's poll; more means no
   * worker was running at the time: the mailing is still sent, late, never dropped. Null without a
   * `scheduleFor`, or when it is not due yet.
   */
  lateByMs: number | null;
}

/** Events the engine emits. */
export interface MailroomEvents {
  /** A delivery reached an outcome (sent, retry scheduled, failed, suppressed, skipped). */
  delivery: (event: {
    projectId: string;
    mailingRef: string;
    kind: MailingRecord['kind'];
    address: string;
    status: DeliveryStatus;
    attempts: number;
    response: string | null;
    error: string | null;
    /**
     * How long the transport took to accept or refuse the message, in milliseconds; null when nothing
     * was handed to it (suppressed, skipped, a render failure, a send handed back at shutdown).
     */
    latencyMs: number | null;
    /**
     * The transport that sent it, when its receipt named one (`routeTransport` names the route's
     * transport or its fallback, the SES transport names itself); null otherwise.
     */
    transport: string | null;
  }) => void;
  /**
   * A mailing's counts, at most once per `progressIntervalMs` per mailing while this process's worker
   * records its outcomes, and once more after it completes (so the last event has the final counts).
   */
  'broadcast:progress': (event: MailingProgress) => void;
  /** This process's worker expanded and committed one page of a source (audience group, CSV file). */
  'source:page': (event: SourcePageEvent) => void;
  /** A mailing became completed. */
  'broadcast:completed': (event: { projectId: string; ref: string; kind: MailingRecord['kind'] }) => void;
  /** One POST of a webhook message ended (metrics). */
  'webhook:attempt': (event: {
    projectId: string;
    endpointId: string;
    type: string;
    /** `retry`: it failed and will be sent again; `failed`: it failed for the last time. */
    outcome: 'delivered' | 'retry' | 'failed';
    statusCode: number | null;
    latencyMs: number;
  }) => void;
  /**
   * A tracking hit was recorded (written behind the answer, in batches): the first open of a delivery by
   * a person or a machine (`email.opened`), or a click (`email.clicked`, with its URL).
   */
  tracking: (event: {
    type: 'email.opened' | 'email.clicked';
    projectId: string;
    mailingRef: string;
    deliveryId: string;
    url: string | null;
    /** Judged to come from a mail-privacy proxy or a link scanner. */
    machine: boolean;
    at: Date;
  }) => void;
  /** An address unsubscribed through a one-click link (not on repeats of the same click). */
  unsubscribe: (event: { projectId: string; address: string; broadcastRef: string }) => void;
  /** An inbound bounce, complaint or delivery report was applied to a delivery (not on repeats). */
  inbound: (event: InboundEffect & { source: InboundSignalSource }) => void;
}

/** The delivery loop. Several may run against one store. */
export interface MailroomWorker {
  /** Start polling in the background. */
  start(): void;
  /** Stop claiming; resolves when in-flight sends have finished. */
  stop(): Promise<void>;
  /** Run until nothing is due (scheduled deliveries in the future do not count); for tests and scripts. */
  drain(): Promise<void>;
  /** Claim and process one round; returns how many deliveries were processed. */
  runOnce(): Promise<number>;
}

/** Admin operations (no project secret: the embedding app or the CLI calls them). */
export interface MailroomAdmin {
  /** Create a project; the secret is returned once and stored only as a hash. */
  createProject(input: {
    name: string;
    sandbox?: boolean;
  }): Promise<{ project: ProjectRecord; secret: string }>;
  /** Issue another secret for a project. */
  createSecret(projectId: string, mode?: SecretMode): Promise<string>;
  addSender(
    projectId: string,
    input: { address: string; name?: string; dkim?: DkimConfig },
  ): Promise<SenderRecord>;
  /** Create a template or a new version of it. MJML is compiled now; invalid MJML or Liquid is refused. */
  createTemplate(
    projectId: string,
    input: { ref: string; format: TemplateFormat; source: string; subject?: string },
  ): Promise<TemplateRecord>;
  createAudienceGroup(projectId: string, input: { ref: string; name?: string }): Promise<AudienceGroupRecord>;
  setSubscription(projectId: string, address: string, status: ProfileStatus): Promise<void>;
  suppress(projectId: string, address: string, reason: SuppressionReason, detail?: string): Promise<void>;
  unsuppress(projectId: string, address: string): Promise<boolean>;
}

/** The engine. */
export interface Mailroom {
  readonly store: Store;
  readonly transport: Transport;
  readonly admin: MailroomAdmin;
  readonly worker: MailroomWorker;
  /** Bounces and complaints: inbound DSN/ARF messages and provider notifications. */
  readonly inbound: MailroomInbound;
  /** Resolve a project secret; throws `UNAUTHORIZED` (one message for missing, malformed and unknown). */
  authenticate(secret: string | null | undefined): Promise<AuthContext>;
  /** Send one message (`POST /send/mail`). `auth` is a secret or an `AuthContext`. */
  send(auth: string | AuthContext, body: unknown, options?: RequestOptions): Promise<SendResult>;
  /** Initial broadcast batch, or a later batch when the body carries `broadcastRef`. */
  broadcast(auth: string | AuthContext, body: unknown, options?: RequestOptions): Promise<BroadcastResult>;
  /** Webhook endpoints of the project, test events, replays, and what was sent. */
  readonly webhooks: MailroomWebhooks;
  /**
   * The project's events (the outbox), oldest first, filtered by types, mailing ref or address, in pages
   * (`next` is the cursor). Events of the last moments may still appear behind a cursor already read
   * (their transactions commit out of order): push through webhooks for completeness.
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
   * Clear the rendered content kept by `storeContent` (of every project) written before `before`, or more than
   * `olderThanDays` days ago, or, with neither, more than `retention.contentDays` days ago. Returns how many
   * deliveries it cleared.
   */
  pruneContent(options?: { before?: Date; olderThanDays?: number }): Promise<number>;
  /** Who a one-click unsubscribe token stands for, changing nothing; `NOT_FOUND` for a forged or unknown one. */
  resolveUnsubscribe(token: string): Promise<UnsubscribeTarget>;
  /**
   * Carry out a one-click unsubscribe: the token's address gets the profile status `unsubscribed` in its
   * project, so no broadcast reaches it unless a source says `includeUnsubscribed` (single messages still
   * do). Idempotent. `NOT_FOUND` for a forged or unknown token.
   */
  unsubscribe(token: string): Promise<UnsubscribeTarget>;
  /**
   * A click on a tracked link: the URL to redirect to (taken from the mailing, never from the request).
   * The hit is recorded behind, in batches. `NOT_FOUND` for a forged, altered or unknown token, or when
   * the engine does not track.
   */
  trackClick(token: string, meta?: TrackingHitMeta): Promise<string>;
  /** A load of the open pixel; recorded behind. `NOT_FOUND` as for `trackClick`. */
  trackOpen(token: string, meta?: TrackingHitMeta): Promise<void>;
  /** A mailing's open and click figures (zeros when it is not tracked); `NOT_FOUND` for another project's. */
  getTracking(auth: string | AuthContext, ref: string, options?: { limit?: number }): Promise<TrackingView>;
  /**
   * One delivery's opens (first and last, how many, by class) and clicks (at most 100, oldest first);
   * `NOT_FOUND` when the mailing has no delivery to that address.
   */
  getDeliveryTracking(auth: string | AuthContext, ref: string, address: string): Promise<DeliveryTracking>;
  /**
   * The project's mailings of one kind, newest first, each with its counts. `page.after` is the `next`
   * of the previous page (a ref). @default limit 25, at most 200
   */
  listMailings(
    auth: string | AuthContext,
    kind: MailingKind,
    page?: { after?: string; limit?: number },
  ): Promise<Page<MailingView>>;
  /**
   * A mailing's deliveries by address, optionally only those whose address starts with `search.prefix`
   * or of one status; `next` is the cursor of the next page. `NOT_FOUND` for another project's ref.
   */
  searchDeliveries(
    auth: string | AuthContext,
    ref: string,
    search?: DeliverySearch,
  ): Promise<Page<DeliveryView>>;
  /** The source jobs of a mailing (audience groups, CSV files) with their progress and row errors. */
  listSourceJobs(auth: string | AuthContext, ref: string): Promise<SourceJobView[]>;
  /** The project's templates, by ref. */
  listTemplates(auth: string | AuthContext): Promise<TemplateView[]>;
  /** One template of the project; `NOT_FOUND` otherwise. */
  getTemplate(auth: string | AuthContext, ref: string): Promise<TemplateView>;
  /**
   * A template rendered for sample data, as a delivery would be (HTML escaped, text derived, subject on
   * one line). `TEMPLATE_INVALID` or `RENDER_FAILED` when it cannot be rendered.
   */
  previewTemplate(auth: string | AuthContext, ref: string, sample?: TemplateSample): Promise<RenderedContent>;
  /** The project's audience groups, by ref, with member counts. */
  listGroups(auth: string | AuthContext): Promise<AudienceGroupView[]>;
  /**
   * Deliveries waiting across every project (no secret: for metrics). An estimate bounded in cost, see
   * {@link QueueDepth}.
   */
  queueDepth(): Promise<QueueDepth>;
  on<E extends keyof MailroomEvents>(event: E, listener: MailroomEvents[E]): () => void;
  /** Stop the worker and close the transport and the store. */
  close(): Promise<void>;
}
