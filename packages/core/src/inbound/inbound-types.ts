import type { InboundSignalKind, InboundSignalSource, MailingKind } from '../store/records.js';
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

/** What became of an inbound message or provider notification. */
export interface InboundReceipt {
  /** `applied`: at least one signal was new; `duplicate`: all were repeats; `ignored`: nothing to act on. */
  outcome: 'applied' | 'duplicate' | 'ignored';
  /** What the message was read as (`bounce`, `complaint`, `auto-reply`, `unrecognised`). */
  report: InboundReport['type'] | 'notification';
  /** Why it was ignored (for the log), when it was. */
  reason?: string;
  effects: InboundEffect[];
}

/** A bounce or complaint a provider reported (SES, Mailgun), after its signature was verified. */
export interface ProviderSignal {
  source: Extract<InboundSignalSource, 'ses' | 'mailgun'>;
  kind: InboundSignalKind;
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
   * transaction: a hard bounce marks the delivery `bounced` and suppresses the address, a soft bounce is
   * recorded (and suppresses after `softBounceLimit` in a row), a complaint marks it `complained`,
   * suppresses and unsubscribes the address. Auto-replies, forged tokens and reports that contradict the
   * delivery they name are ignored with a log line. Never rejects for bad input: the receipt says why it
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
   * Whether `address` is one the inbound listener should take mail for: any local part at the bounce
   * domain (case-insensitive). Everything else is refused at RCPT (never an open relay).
   */
  acceptsRecipient(address: string): boolean;
}
