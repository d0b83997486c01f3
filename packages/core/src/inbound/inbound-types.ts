import type { InboundSignalKind, InboundSignalSource, MailingKind } from '../store/records.js';
import type { BounceReason } from './bounce-reasons.js';
import type { InboundReport } from './inbound-report.js';

/** The envelope of an inbound message, as the SMTP listener (or a simulator) received it. */
export interface InboundEnvelope {
  /** `RCPT TO` addresses (the return paths the message was mailed to). */
  envelopeTo: readonly string[];
  /** `MAIL FROM` (empty for a bounce, by RFC 5321). */
  envelopeFrom?: string;
  /** The connecting client, for the log. */
  remoteAddress?: string;
}

/** One delivery an inbound message or notification changed (or would have, for a repeat). */
export interface InboundEffect {
  projectId: string;
  mailingRef: string;
  mailingKind: MailingKind;
  deliveryId: string;
  address: string;
  signal: InboundSignalKind;
  /** Why: the bounce's reason (`feedback` for a complaint, `delivered` for a delivery report). */
  reason: BounceReason;
  /** The RFC 3463 status, when known. */
  status: string | null;
  diagnostic: string | null;
  /** False when the same signal had been applied before (a resent DSN, a replayed notification). */
  applied: boolean;
  /** The delivery was updated: its status (to `bounced` or `complained`), or a soft bounce's diagnostic. */
  deliveryChanged: boolean;
  /** The address was suppressed by this signal. */
  suppressed: boolean;
}

/**
 * Why an inbound message or notification changed nothing, as a short code (a bounded set: the metrics
 * count by it):
 * - `disabled`: the engine has no `bounces` option; `too-large`: over the size cap;
 * - `unreadable`: the MIME could not be parsed; `unrecognised`: neither a bounce, a complaint nor an
 *   auto-reply; `auto-reply`: an out-of-office or other automatic reply; `not-a-bounce`: a report that
 *   names no failure (a provider event of another type, a bounce report read as an auto-reply);
 * - `no-token`: no valid return-path token (nor, for a complaint, a Message-ID of this engine);
 *   `forged-token`: a return-path token at the bounce domain whose MAC does not verify;
 * - `other-delivery`: the report names another delivery of the project than its token;
 *   `other-project`: it names a delivery of another project;
 * - `unknown-message`: a provider notification names no delivery of this engine; `other-recipient`: it
 *   names another recipient than the delivery's.
 */
export type InboundIgnoreCode =
  | 'disabled'
  | 'too-large'
  | 'unreadable'
  | 'unrecognised'
  | 'auto-reply'
  | 'not-a-bounce'
  | 'no-token'
  | 'forged-token'
  | 'other-delivery'
  | 'other-project'
  | 'unknown-message'
  | 'other-recipient'
  | 'header-too-large';

/** What became of an inbound message or provider notification. */
export interface InboundReceipt {
  /** `applied`: at least one signal was new; `duplicate`: all were repeats; `ignored`: nothing to act on. */
  outcome: 'applied' | 'duplicate' | 'ignored';
  /** What the message was read as (`bounce`, `complaint`, `auto-reply`, `unrecognised`). */
  report: InboundReport['type'] | 'notification';
  /** Why it was ignored (for the log), when it was. */
  reason?: string;
  /** Why it was ignored, as a code (for metrics), when it was. */
  code?: InboundIgnoreCode;
  effects: InboundEffect[];
}

/**
 * What the engine emits (`inbound:message`) for every inbound message and provider notification taken:
 * the outcome, and why one was ignored or deferred. For metrics.
 */
export interface InboundMessageEvent {
  /** `smtp`: mailed to the bounce domain; `ses`, `mailgun`: a provider's notification. */
  via: 'smtp' | 'ses' | 'mailgun';
  report: InboundReceipt['report'];
  /** `deferred`: answered "try again later" (not recorded yet, rate limited, the store failed). */
  outcome: InboundReceipt['outcome'] | 'deferred';
  /** Why it was ignored or deferred (`not-sent-yet`, `rate-limited`, `store-failed` for deferrals). */
  code: InboundIgnoreCode | 'not-sent-yet' | 'rate-limited' | 'store-failed' | null;
}

/**
 * A bounce or complaint a provider reported (SES, Mailgun), after its signature was verified. A bounce's
 * effect follows its reason, classified from `status` and `diagnostic` as any bounce is; `kind` is the
 * provider's own word (permanent or transient) and `reason` its own classification, used when the words
 * say nothing.
 */
export interface ProviderSignal {
  source: Extract<InboundSignalSource, 'ses' | 'mailgun'>;
  kind: InboundSignalKind;
  /** The provider's own reason (SES `NoEmail` is `userunknown`), when it gives one. */
  reason?: BounceReason | null;
  /** The Message-ID of the message, as Mailroom sent it (`<dlv_...@domain>`), brackets optional. */
  messageId: string;
  /** The recipient the provider reports about. */
  address: string;
  status?: string | null;
  diagnostic?: string | null;
}

/** Bounces and complaints (`mailroom.inbound`). */
export interface MailroomInbound {
  /** Whether the engine has the `bounces` option (VERP return paths). */
  readonly enabled: boolean;
  /** The bounce domain (lower-cased), when enabled. */
  readonly domain: string | undefined;
  /**
   * Take one inbound message: the raw bytes (headers and body) mailed to the bounce domain, with its
   * envelope. An RFC 3464 DSN, an RFC 5965 ARF report or a plain-text bounce naming a delivery through
   * a valid VERP token (for complaints, also the original Message-ID) is applied in one store
   * transaction. A bounce's effect follows its reason (`classifyReason`, the table of the README): a
   * reason caused by the address (`userunknown`, `hostunknown`, `hasmoved`, `notaccept`) marks the
   * delivery `bounced` and suppresses the address; a soft one is recorded (and suppresses after
   * `softBounceLimit` in a row); a sender-side one (`authfailure`, `blocked`, `spamdetected`...) marks
   * the delivery `bounced` and never suppresses; a delivery report ends a soft streak. A complaint marks
   * it `complained`, suppresses and unsubscribes the address. The token is authoritative: a returned
   * copy with no or a foreign Message-ID, or a report naming another recipient (a forward), applies to
   * the token's delivery (what the report named is kept with the signal). Auto-replies, forged tokens
   * and reports whose Message-ID names another delivery of this engine are ignored with a log line and a
   * code (`receipt.code`). Never rejects for bad input: the receipt says why it
   * was ignored. Rejects with `INBOUND_DEFERRED` (retryable) when the named delivery's send outcome is not
   * recorded yet, and with `STORE_FAILED` when the store fails: the sender should retry (the listener
   * answers 451). The inbound SMTP listener and simulators (which produce DSN/ARF bytes) call this.
   * @example
   * await mailroom.inbound.receive(rawDsn, { envelopeTo: ['b+dlv_...-1a2b...@bounces.acme.test'] });
   */
  receive(raw: Uint8Array, envelope: InboundEnvelope): Promise<InboundReceipt>;
  /**
   * Apply a bounce or complaint a provider reported, found by the message's Message-ID. Call it only
   * after verifying the provider's signature (the HTTP adapter's `/inbound/ses` and `/inbound/mailgun` do).
   */
  applyProviderSignal(signal: ProviderSignal): Promise<InboundReceipt>;
  /**
   * Take a provider's notification (the parsed JSON body of its POST): `ses` (an SNS message carrying an
   * SES bounce, complaint or delivery notification; a `SubscriptionConfirmation` is confirmed) or
   * `mailgun` (a signed webhook). The signature is verified first: an unsigned or wrongly signed body is
   * `UNAUTHORIZED` (401) and changes nothing; a provider not configured (the `notifications` option) is
   * `NOT_FOUND`.
   */
  notification(provider: 'ses' | 'mailgun', body: unknown): Promise<InboundReceipt>;
  /**
   * Tell the engine that the listener refused a message without handing it on (`too-large`: declared or
   * found over the size cap; `rate-limited`: over its per-IP rate, deferred with 451; `header-too-large`:
   * more header lines or bytes than the listener takes; `forged-token`: a return path at the bounce
   * domain whose token's MAC is wrong, refused at RCPT). Nothing changes; it is counted
   * (`inbound:message`) like an ignored message. `too-large` and `rate-limited` are logged here; the
   * listener logs the other two once per window, since a flood of them is the point of an attack.
   */
  refused(
    code: 'too-large' | 'rate-limited' | 'header-too-large' | 'forged-token',
    envelope: Partial<InboundEnvelope>,
  ): void;
  /**
   * What the listener should answer at RCPT for `address`, before any byte of the message is read:
   * `outside` (not at the bounce domain: never an open relay), `forged` (a `b+<token>` return path at the
   * bounce domain whose MAC is wrong: checked with the HMAC alone, no store lookup), or `accept`.
   */
  recipientVerdict(address: string): Promise<'accept' | 'outside' | 'forged'>;
  /**
   * Whether `address` is one the inbound listener should take mail for: any local part at the bounce
   * domain (case-insensitive). Everything else is refused at RCPT (never an open relay).
   */
  acceptsRecipient(address: string): boolean;
}
