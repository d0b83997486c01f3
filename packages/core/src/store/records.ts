import type { SendingWindow } from '../base/local-time.js';
/**
 * The records the engine keeps. A `Store` persists them as they are; it adds no fields of its own
 * and derives nothing (docs/architecture.md, invariant 9). All addresses are normalized by the core
 * before they reach a store (see `normalizeAddress`): the local part as given, the domain lower-cased.
 */

import type { SecretMode } from '../base/secrets.js';

/** A JSON value: what variables, traits and configs are made of. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** Template variables or profile traits: a flat-or-nested JSON object. */
export type Variables = Record<string, Json>;

/** A tenant. Every other record belongs to exactly one project. */
export interface ProjectRecord {
  id: string;
  name: string;
  createdAt: Date;
}

export type { SecretMode } from '../base/secrets.js';

/**
 * What a project key may do. `full`: everything over HTTP; `sending`: only the spec's send endpoints
 * (send, broadcast and its batches); `read`: only reads (GET and HEAD of the management routes).
 * `sending` and `read` are disjoint; `full` holds both.
 */
export type KeyScope = 'full' | 'sending' | 'read';

/**
 * A project's API key, stored only as the SHA-256 hex digest of its secret. The project's first secret is
 * its first `full` key; secrets made before keys had scopes are `full` keys with no domain limit.
 */
export interface ApiKeyRecord {
  /** SHA-256 hex digest of the whole secret (64 characters). Unique across all projects. */
  hash: string;
  /** `key_…`, unique across all projects: what list, revoke and rotate name a key by. */
  id: string;
  projectId: string;
  mode: SecretMode;
  /** What the key may do over HTTP (`full`, `sending`, `read`). */
  scope: KeyScope;
  /**
   * Sender domains (lower case) the key may send from; empty: any sender of the project.
   */
  domains: string[];
  /** The secret's first characters (`sk_live_AbCd`), to tell keys apart in a list; never enough to use. */
  prefix: string;
  /**
   * What the key is for (`CI`, `marketing site`), shown in lists; absent or null: no name (keys made
   * before keys had names, and keys made without one).
   */
  name?: string | null;
  createdAt: Date;
  /** When the key was last used, to the minute at best (the engine writes it at most once a minute). */
  lastUsedAt: Date | null;
  /** Set once by a revocation; a revoked key authenticates nothing. */
  revokedAt: Date | null;
  /** Set by a rotation: the key works until then (its grace period), and never after. */
  expiresAt: Date | null;
  /** The id of the key that replaced this one in a rotation. */
  replacedBy: string | null;
}

/** A project secret: an API key (kept as a name for what the first key of a project is). */
export type ProjectSecretRecord = ApiKeyRecord;

/** A DKIM key for one sender domain. */
export interface DkimConfig {
  /** DNS selector, for example `mail2026`. */
  selector: string;
  /** The private key in PEM (RSA or Ed25519). */
  privateKey: string;
}

/** A sender identity: an address the project may send from. Unique per (projectId, address). */
export interface SenderRecord {
  id: string;
  projectId: string;
  address: string;
  /** Default display name when a request gives none. */
  name: string | null;
  /** DKIM signing key for the address's domain, if configured. */
  dkim: DkimConfig | null;
  createdAt: Date;
}

/** The formats a template can be written in; each is a Liquid template. */
export type TemplateFormat = 'html' | 'mjml' | 'text';

/** A template. Unique per (projectId, ref); a new version replaces the row and bumps `version`. */
export interface TemplateRecord {
  id: string;
  projectId: string;
  ref: string;
  format: TemplateFormat;
  /** Default subject (Liquid) when a request gives none. */
  subject: string | null;
  /** The source as written (MJML, HTML or text, with Liquid). */
  source: string;
  /** For `mjml`: the HTML compiled once at creation, Liquid still inside. For `html`/`text`: the source. */
  compiled: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** Subscription status of a profile. */
export type ProfileStatus = 'subscribed' | 'unsubscribed';

/** A member of a project's audience. Unique per (projectId, address). */
export interface ProfileRecord {
  projectId: string;
  address: string;
  name: string | null;
  traits: Variables;
  status: ProfileStatus;
  /** Source labels the profile was tagged with (CSV sources). */
  labels: string[];
  createdAt: Date;
  updatedAt: Date;
}

/**
 * What to do with a field that an existing profile already has when the incoming data differs.
 * `preserve` keeps the stored value; `override` replaces it with the incoming one.
 */
export type ExistingAction = 'preserve' | 'override';

/**
 * One profile to upsert. Every store applies exactly the rule of `audience/profile-merge.ts` (`newProfile`,
 * `mergeProfile`; the kit compares each store with it):
 * - absent profile: inserted with `name ?? null`, `traits ?? {}`, status `subscribed`, its labels once each.
 * - `name: null` or absent means "not given".
 * - existing profile, `name`: replaced when `name` is given and `onExistingProfile` is `override`,
 *   or when the stored name is null; otherwise kept.
 * - existing profile, `traits`: merged on top-level keys (a nested value is replaced whole); a key is present
 *   only as the object's own key (`constructor` is a trait like any other); for a key present on both sides
 *   the incoming value wins only when `onExistingTrait` is `override`.
 * - `labels`: union, each label once, in first-occurrence order. `status` is never changed by an upsert.
 * - `updatedAt` moves only when the name, traits or labels actually change.
 */
export interface ProfileUpsert {
  address: string;
  name?: string | null;
  traits?: Variables;
  labels?: string[];
}

/** Options applying to every row of one profile upsert. */
export interface ProfileUpsertOptions {
  /** @default 'preserve' */
  onExistingTrait: ExistingAction;
  /** @default 'preserve' */
  onExistingProfile: ExistingAction;
  /** When set, every upserted profile also becomes a member of this audience group (by id). */
  groupId?: string | null;
}

/** An audience group. Unique per (projectId, ref). */
export interface AudienceGroupRecord {
  id: string;
  projectId: string;
  ref: string;
  name: string | null;
  /**
   * Double opt-in (issue 38): a signup through a form joins the group only once confirmed from the
   * mailed link. Absent: false.
   */
  doubleOptIn?: boolean;
  createdAt: Date;
}

/**
 * Why an address is suppressed. `soft-bounce`: `softBounceLimit` soft bounces in a row (see the `bounces`
 * option). `mailbox-unavailable`: a full mailbox or a suspended account that kept failing (3 bounces over
 * 14 days with no delivery in between, by default; `bounces.mailboxUnavailable`).
 */
export type SuppressionReason =
  | 'hard-bounce'
  | 'soft-bounce'
  | 'mailbox-unavailable'
  | 'complaint'
  | 'manual'
  | 'unsubscribe';

/** A suppressed address: it gets no broadcast mail, ever. Unique per (projectId, address). */
export interface SuppressionRecord {
  projectId: string;
  /** Normalized address (domain lower-cased). */
  address: string;
  reason: SuppressionReason;
  detail: string | null;
  createdAt: Date;
}

/** A single message (`message`) or a broadcast (`broadcast`). */
export type MailingKind = 'message' | 'broadcast';

/**
 * Status of a mailing.
 * - `queued`: accepted, deliveries waiting. `scheduled`: waiting for `scheduleFor`.
 * - `sending`: at least one delivery was attempted or a source is expanding.
 * - `completed`: every delivery is terminal and no source job is active.
 * - `cancelled`: stopped by the user; takes no batch. `failed`: could not proceed at all.
 */
export type MailingStatus = 'queued' | 'scheduled' | 'sending' | 'completed' | 'cancelled' | 'failed';

/** A name-and-address pair (sender, recipient). */
export interface Mailbox {
  address: string;
  name: string;
}

/** An attachment as it is kept: bytes already decoded, or a URL fetched once before sending. */
export interface AttachmentSpec {
  /** File name with extension. */
  filename: string;
  /** MIME type, from the extension. */
  contentType: string;
  /** Base64 of the bytes (decoded from raw base64 or a data URI at accept time). */
  contentBase64?: string;
  /** A URL fetched through the guarded fetcher (once per mailing). */
  url?: string;
}

/** A calendar invitation (TypeScript client's `invitation`), delivered as a text/calendar part. */
export interface InvitationSpec {
  title: string;
  startDate: string;
  endDate: string;
  url?: string;
  description?: string;
  location?: string;
}

/**
 * The content of a mailing, frozen at accept time: a batch cannot change it. All strings are Liquid
 * sources, parsed once per mailing by the worker and rendered per recipient.
 */
export interface ContentSnapshot {
  /** Subject (Liquid). */
  subject: string;
  /** Preview text (Liquid), placed hidden at the top of the HTML. */
  preheader: string | null;
  /** HTML body (Liquid), already MJML-compiled for MJML templates. Null for text-only content. */
  html: string | null;
  /** Text body (Liquid). Null when it is to be derived from the HTML. */
  text: string | null;
  /** Tracking choices of the mailing (`options.track`); kept with the content because they shape it. */
  track?: MailingTrackOptions;
  /** Custom headers of every message of the mailing (a batch item's `headers`); they shape what is sent. */
  headers?: Record<string, string>;
  /** Labels of the mailing (a batch item's `tags`), kept for reports. */
  tags?: MessageTag[];
  /**
   * When each recipient is due (a broadcast's `options.localTime` and `options.window`): kept with the
   * content, frozen at accept, so that deliveries added later by sources are timed the same way.
   */
  plan?: DeliveryPlan;
  /** Global variables: the fallback for every recipient's own variables. */
  variables: Variables;
  /** Template ref and version the content came from, if any. */
  templateRef: string | null;
  templateVersion: number | null;
}

/** Per-recipient timing of a broadcast: a local time of day and/or a sending window in each recipient's zone. */
export interface DeliveryPlan {
  /** The trait (or inline recipient variable) holding the recipient's IANA zone; null: every recipient in `fallback`. */
  timezone: string | null;
  /** The zone of recipients with none or an unknown one. */
  fallback: string;
  /** `HH:MM`: each recipient at the next such time in their zone. */
  at?: string;
  /** Deliveries only inside this window in the recipient's zone. */
  window?: SendingWindow;
}

/** A label of a message: a name and a value. */
export interface MessageTag {
  name: string;
  value: string;
}

/** A mailing's tracking choices (`options.track`, our extension); absent keys follow the engine. */
export interface MailingTrackOptions {
  /** false: no open pixel. */
  opens?: boolean;
  /** false: links are not rewritten. */
  clicks?: boolean;
  /** true: the derived text part carries the tracked links. @default false */
  textLinks?: boolean;
}

/** Options given with the mailing (spec `options`). */
export interface MailingOptions {
  acquiringAudience: string | null;
  scheduleFor: Date | null;
  /** Keep the rendered subject, text and HTML of each delivery. */
  storeContent: boolean;
  /**
   * The topic the mailing is sent to (issue 38): only contacts whose state for it allows it receive it,
   * checked at source expansion and again at claim time. Absent or null: no topic.
   */
  topic?: string | null;
}

/** A single message or a broadcast. Unique per (projectId, ref). */
export interface MailingRecord {
  id: string;
  projectId: string;
  kind: MailingKind;
  /** Public reference (`msg_...` or `bc_...`). */
  ref: string;
  status: MailingStatus;
  sender: Mailbox;
  replyTo: string | null;
  content: ContentSnapshot;
  attachments: AttachmentSpec[];
  invitation: InvitationSpec | null;
  options: MailingOptions;
  /** Accepted with a sandbox secret: recorded, never delivered. */
  sandbox: boolean;
  /** Number of batches committed so far. */
  batchCount: number;
  createdAt: Date;
  updatedAt: Date;
}

/** One accepted batch of a mailing (the initial request, or a later batch by `broadcastRef`). */
export interface BatchRecord {
  id: string;
  mailingId: string;
  /** 1 for the initial batch, then 2, 3, ... */
  seq: number;
  /** Recipients given inline in the request (after collapsing duplicates). */
  recipientCount: number;
  createdAt: Date;
}

/**
 * Status of one delivery. Terminal: `sent`, `failed`, `suppressed`, `skipped`, `bounced`, `complained`.
 * A retry keeps `queued` with a later `nextAttemptAt`. `bounced` is a hard bounce: one that came back after
 * the relay accepted the message (an inbound signal on a `sent` delivery, see `Store.applyInboundSignal`),
 * or a 5.1.x refusal of the recipient at send time (the worker's outcome). `complained` (the recipient
 * reported it as spam) is set only by an inbound signal, on a `sent` or `bounced` delivery.
 */
export type DeliveryStatus =
  | 'queued'
  | 'sending'
  | 'sent'
  | 'failed'
  | 'suppressed'
  | 'skipped'
  | 'bounced'
  | 'complained';

/** The terminal delivery statuses. */
export const TERMINAL_DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'sent',
  'failed',
  'suppressed',
  'skipped',
  'bounced',
  'complained',
];

/** Every delivery status, in the order views list them. */
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'queued',
  'sending',
  'sent',
  'failed',
  'suppressed',
  'skipped',
  'bounced',
  'complained',
];

/** Rendered content kept for a delivery when the mailing's `storeContent` is on. */
export interface RenderedContent {
  subject: string;
  text: string;
  html: string | null;
}

/**
 * One recipient of one mailing. Unique per (mailingId, address): a second insert of the same pair is
 * ignored (docs/architecture.md, invariant 2).
 */
export interface DeliveryRecord {
  id: string;
  projectId: string;
  mailingId: string;
  batchId: string;
  address: string;
  name: string;
  /** The recipient's own variables (override the mailing's global ones). */
  variables: Variables;
  /** Traits for this recipient (from CSV columns or the profile), exposed as `profile.*`. */
  traits: Variables;
  status: DeliveryStatus;
  attempts: number;
  /** Earliest time of the next attempt. */
  nextAttemptAt: Date;
  /** While `sending`: when the current lease ends. */
  leaseExpiresAt: Date | null;
  /** Fencing token: incremented on every claim; outcome writes must present the current one. */
  leaseToken: number;
  /** RFC 5322 Message-ID, fixed at creation, the same on every attempt. */
  messageId: string;
  /** Last transport reply (SMTP code and text). */
  lastResponse: string | null;
  /** Last error message (never a secret). */
  lastError: string | null;
  sentAt: Date | null;
  /** Kept only when the mailing's `storeContent` is on. */
  content: RenderedContent | null;
  createdAt: Date;
  updatedAt: Date;
  /**
   * Claim order (`DeliveryQueue.claimDeliveries`): 0 for a single message's delivery (transactional: a
   * password reset must not wait behind a broadcast), claimed before 1, a broadcast's. Absent means 1
   * (stores return it absent then), so records written before it existed read as broadcasts.
   */
  priority?: DeliveryPriority;
}

/** The claim order of a delivery: see `DeliveryRecord.priority`. */
export type DeliveryPriority = 0 | 1;

/** A delivery handed to a worker by a claim, with the lease it holds. */
export interface ClaimedDelivery extends DeliveryRecord {
  status: 'sending';
  leaseExpiresAt: Date;
}

/** Kinds of source a broadcast can expand. */
export type SourceKind = 'audience' | 'csv';

/** Status of a source job. */
export type SourceJobStatus = 'pending' | 'running' | 'done' | 'failed';

/**
 * A durable job that expands a source (audience group, CSV file) into deliveries page by page,
 * checkpointing progress so a crash resumes where it stopped.
 */
export interface SourceJobRecord {
  id: string;
  projectId: string;
  mailingId: string;
  batchId: string;
  kind: SourceKind;
  /** The normalized source config (ref and options, or label, url and columnMappings). */
  config: Json;
  status: SourceJobStatus;
  /** Opaque progress written by the expander (byte offset, last address, ETag...). */
  checkpoint: Json | null;
  rowsDone: number;
  rowsFailed: number;
  /** Failed rows, capped (line number and reason). */
  rowErrors: Array<{ line: number; reason: string }>;
  error: string | null;
  leaseExpiresAt: Date | null;
  leaseToken: number;
  createdAt: Date;
  updatedAt: Date;
}

/** An idempotency key's record. Unique per (projectId, key). */
export interface IdempotencyRecord {
  projectId: string;
  key: string;
  /** SHA-256 of the operation and canonical body. */
  requestHash: string;
  state: 'running' | 'done';
  /** The first response, once done. */
  response: Json | null;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * What an inbound signal (a DSN, an ARF report, a provider notification, a refusal at send time) says
 * about one delivery. The core decides the kind from the bounce's reason (`inbound/bounce-reasons.ts`).
 * - `hard-bounce`: the address will not work (a reason caused by the address: unknown user or domain, moved).
 * - `soft-bounce`: it did not work this time (a full mailbox, a down server, a delay notice, a 4.x.x).
 * - `sender-side`: the sender was refused (its IP, domain, authentication, rate or content); the address
 *   is fine and is never suppressed for it. Counted for the sender's reputation.
 * - `complaint`: the recipient reported the message as spam.
 * - `delivered`: a positive report (a `delivered` DSN, a provider's delivery notice); ends a soft-bounce streak.
 */
export type InboundSignalKind = 'hard-bounce' | 'soft-bounce' | 'sender-side' | 'complaint' | 'delivered';

/** Where an inbound signal came from (`smtp`: the relay's refusal at send time). */
export type InboundSignalSource = 'dsn' | 'arf' | 'text-bounce' | 'ses' | 'mailgun' | 'smtp';

/**
 * One inbound signal as it is kept: the log of bounces and complaints, and the key that makes applying
 * a repeated signal (a resent DSN, a replayed notification) a no-op. Unique per `dedupeKey`.
 */
export interface InboundSignalRecord {
  id: string;
  projectId: string;
  /** The mailing of the delivery (counts per broadcast). */
  mailingId: string;
  /** The delivery the signal is about. */
  deliveryId: string;
  /** The delivery's normalized address. */
  address: string;
  /** The destination domain: the part of `address` after its last `@`, lower-cased (counts per destination). */
  domain: string;
  kind: InboundSignalKind;
  source: InboundSignalSource;
  /**
   * The reason of the bounce, by the core's taxonomy (`userunknown`, `authfailure`, `mailboxfull`...;
   * `feedback` for a complaint, `delivered` for a delivery report); null for signals kept before reasons.
   */
  reason: string | null;
  /** RFC 3463 status code (`5.1.1`), when the report gave one. */
  status: string | null;
  /** The remote server's words (`smtp; 550 5.1.1 user unknown`), or the provider's, capped in length. */
  diagnostic: string | null;
  /** The recipient the report named, when it differs from `address` (a forward, an alias). */
  reportedAddress: string | null;
  /** The Message-ID of the returned copy, when it differs from the delivery's (a forwarder, a list). */
  reportedMessageId: string | null;
  /** At most one signal per key is ever applied (for example `hard-bounce:<delivery id>`). */
  dedupeKey: string;
  createdAt: Date;
}

/**
 * Where a domain stands, from its last conclusive check:
 * - `pending`: added, never verified (a check that got no answer leaves it here);
 * - `verified`: every required record was found;
 * - `failed`: was verified, then a required record went missing or wrong (`domain.failed` was emitted).
 * A check that gets no answer changes nothing: the last conclusive state stands.
 */
export type DomainState = 'pending' | 'verified' | 'failed';
