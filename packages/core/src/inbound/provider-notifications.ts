/**
 * Provider notifications: Amazon SES (bounce, complaint and delivery notifications delivered by SNS) and
 * Mailgun (signed webhooks), each verified before anything is read from it, then mapped to the same
 * signals as inbound DSNs and ARF reports.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MailroomError } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import type { InboundSignalKind } from '../store/records.js';
import type { BounceReason } from './bounce-reasons.js';
import type { InboundReceipt, ProviderSignal } from './inbound-types.js';
import { statusCodeIn } from './report-fields.js';
import { createSnsVerifier, SNS_CERTIFICATE_URL, type SnsMessage } from './sns-message.js';

/** Options of provider notifications (`createMailroom({ notifications })`). */
export interface NotificationOptions {
  /** Amazon SES notifications through SNS (`POST /inbound/ses`). */
  ses?: {
    /** Accept only these SNS topics (recommended: the topics your SES identities notify). @default any */
    topicArns?: string[];
    /**
     * Where SNS signing certificates may be fetched from.
     * @default https://sns.<region>.amazonaws.com/....pem
     */
    certificateUrl?: RegExp;
    /** Confirm SNS subscriptions by fetching their `SubscribeURL` (through the guarded fetcher). @default true */
    confirmSubscriptions?: boolean;
    /** Where a `SubscribeURL` may point. @default https://sns.<region>.amazonaws.com/ */
    subscribeUrl?: RegExp;
  };
  /** Mailgun webhooks (`POST /inbound/mailgun`). */
  mailgun?: {
    /** The HTTP webhook signing key of the Mailgun account. */
    signingKey: string;
  };
}

/** A provider's notifications, once verified. Internal; exposed as `mailroom.inbound.notification`. */
export type NotificationProvider = 'ses' | 'mailgun';

const SNS_SUBSCRIBE_URL = /^https:\/\/sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\//;
/** Mailgun signatures older than this are refused (replays). */
const MAILGUN_MAX_AGE_S = 15 * 60;

/** The notification handler of an engine. */
export function createNotifications(
  ctx: BaseContext,
  options: NotificationOptions,
  apply: (signal: ProviderSignal) => Promise<InboundReceipt>,
): (provider: NotificationProvider, body: unknown) => Promise<InboundReceipt> {
  const sns = options.ses
    ? createSnsVerifier(ctx.fetcher, options.ses.certificateUrl ?? SNS_CERTIFICATE_URL)
    : undefined;
  const nothing = (reason: string): InboundReceipt => ({
    outcome: 'ignored',
    report: 'notification',
    reason,
    effects: [],
  });

  async function ses(body: unknown): Promise<InboundReceipt> {
    const conf = options.ses;
    if (!conf || !sns) throw new MailroomError('NOT_FOUND', 'SES notifications are not enabled');
    const message = await sns.verify(body, ctx.clock.now());
    if (conf.topicArns && !conf.topicArns.includes(message.TopicArn)) {
      throw new MailroomError('UNAUTHORIZED', 'Invalid SNS message: topic not allowed');
    }
    if (message.Type === 'SubscriptionConfirmation') return confirm(message);
    if (message.Type !== 'Notification') return nothing(message.Type);
    let payload: SesPayload;
    try {
      payload = JSON.parse(message.Message) as SesPayload;
    } catch {
      return nothing('the SNS message holds no SES notification');
    }
    const signals = sesSignals(payload);
    if (signals.length === 0) return nothing('no bounce, complaint or delivery in it');
    return merge(await Promise.all(signals.map(apply)));
  }

  async function confirm(message: SnsMessage): Promise<InboundReceipt> {
    const conf = options.ses;
    const url = message.SubscribeURL ?? '';
    if (conf?.confirmSubscriptions === false) return nothing('subscription confirmation not enabled');
    if (!(conf?.subscribeUrl ?? SNS_SUBSCRIBE_URL).test(url)) {
      throw new MailroomError('UNAUTHORIZED', 'Invalid SNS message: SubscribeURL not allowed');
    }
    const res = await ctx.fetcher.fetch(url, { maxBytes: 64 * 1024, timeoutMs: 10_000 });
    await res.bytes();
    ctx.logger.info({ topic: message.TopicArn, status: res.status }, 'SNS subscription confirmed');
    if (res.status !== 200) {
      throw new MailroomError('FETCH_REFUSED', `SNS subscription confirmation answered ${res.status}`);
    }
    return nothing('subscription confirmed');
  }

  async function mailgun(body: unknown): Promise<InboundReceipt> {
    const key = options.mailgun?.signingKey;
    if (!key) throw new MailroomError('NOT_FOUND', 'Mailgun webhooks are not enabled');
    const b = body as {
      signature?: { timestamp?: unknown; token?: unknown; signature?: unknown };
      'event-data'?: MailgunEvent;
    } | null;
    const sig = b?.signature;
    if (
      !sig ||
      typeof sig.timestamp !== 'string' ||
      typeof sig.token !== 'string' ||
      typeof sig.signature !== 'string'
    ) {
      throw new MailroomError('UNAUTHORIZED', 'Invalid Mailgun webhook: no signature');
    }
    const expected = createHmac('sha256', key)
      .update(sig.timestamp + sig.token)
      .digest();
    const given = /^[0-9a-f]{64}$/i.test(sig.signature) ? Buffer.from(sig.signature, 'hex') : Buffer.alloc(0);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new MailroomError('UNAUTHORIZED', 'Invalid Mailgun webhook: signature mismatch');
    }
    const age = ctx.clock.now().getTime() / 1000 - Number(sig.timestamp);
    if (!(Math.abs(age) <= MAILGUN_MAX_AGE_S))
      throw new MailroomError('UNAUTHORIZED', 'Invalid Mailgun webhook: too old');
    const signal = b?.['event-data'] ? mailgunSignal(b['event-data']) : undefined;
    return signal ? apply(signal) : nothing('no bounce, complaint or delivery in it');
  }

  return (provider, body) => (provider === 'ses' ? ses(body) : mailgun(body));
}

interface SesRecipient {
  emailAddress?: string;
  status?: string;
  diagnosticCode?: string;
}

interface SesPayload {
  notificationType?: string;
  eventType?: string;
  mail?: { commonHeaders?: { messageId?: string }; headers?: Array<{ name?: string; value?: string }> };
  bounce?: { bounceType?: string; bounceSubType?: string; bouncedRecipients?: SesRecipient[] };
  complaint?: { complainedRecipients?: SesRecipient[]; complaintFeedbackType?: string };
  delivery?: { recipients?: string[] };
}

/** SES bounce subtypes, as reasons (as Sisimai reads them); `General` and `Undetermined` say nothing. */
const SES_SUBTYPES: Record<string, BounceReason> = {
  NoEmail: 'userunknown',
  Suppressed: 'suppressed',
  OnAccountSuppressionList: 'suppressed',
  MailboxFull: 'mailboxfull',
  MessageTooLarge: 'mesgtoobig',
  ContentRejected: 'contenterror',
  AttachmentRejected: 'securityerror',
};

/** Mailgun failure reasons that name a cause (`bounce` and `generic` do not). */
const MAILGUN_REASONS: Record<string, BounceReason> = {
  'suppress-bounce': 'suppressed',
  'suppress-complaint': 'suppressed',
  'suppress-unsubscribe': 'suppressed',
  old: 'expired',
  espblock: 'blocked',
};

/** The signals of one SES notification (one per recipient). */
export function sesSignals(p: SesPayload): ProviderSignal[] {
  const type = p.notificationType ?? p.eventType;
  const messageId =
    p.mail?.commonHeaders?.messageId ??
    p.mail?.headers?.find((h) => h.name?.toLowerCase() === 'message-id')?.value;
  if (!messageId) return [];
  const make = (
    kind: InboundSignalKind,
    address: string,
    status: string | null,
    diagnostic: string | null,
  ): ProviderSignal => ({
    source: 'ses',
    kind,
    messageId,
    address,
    status,
    diagnostic,
  });
  if (type === 'Bounce') {
    // Permanent or not (Transient, Undetermined); the reason comes from the words, else the subtype.
    const kind = p.bounce?.bounceType === 'Permanent' ? 'hard-bounce' : 'soft-bounce';
    const reason = SES_SUBTYPES[p.bounce?.bounceSubType ?? ''] ?? null;
    return (p.bounce?.bouncedRecipients ?? []).flatMap((r) =>
      r.emailAddress
        ? [
            {
              ...make(kind, r.emailAddress, statusCodeIn(r.status ?? '') ?? null, r.diagnosticCode ?? null),
              reason,
            },
          ]
        : [],
    );
  }
  if (type === 'Complaint') {
    const feedback = p.complaint?.complaintFeedbackType ?? 'abuse';
    return (p.complaint?.complainedRecipients ?? []).flatMap((r) =>
      r.emailAddress ? [make('complaint', r.emailAddress, null, `feedback-type ${feedback}`)] : [],
    );
  }
  if (type === 'Delivery') return (p.delivery?.recipients ?? []).map((a) => make('delivered', a, null, null));
  return [];
}

interface MailgunEvent {
  event?: string;
  severity?: string;
  recipient?: string;
  reason?: string;
  message?: { headers?: { 'message-id'?: string } };
  'delivery-status'?: { code?: number; message?: string; description?: string; 'enhanced-code'?: string };
}

/** The signal of one Mailgun event, or undefined for events that are none. */
export function mailgunSignal(e: MailgunEvent): ProviderSignal | undefined {
  const messageId = e.message?.headers?.['message-id'];
  if (!messageId || !e.recipient) return undefined;
  const status = e['delivery-status'];
  const diagnostic =
    [status?.code, status?.message || status?.description]
      .filter((v) => v !== undefined && v !== '')
      .join(' ') || null;
  const base = {
    source: 'mailgun' as const,
    messageId: messageId.startsWith('<') ? messageId : `<${messageId}>`,
    address: e.recipient,
  };
  const code = status?.['enhanced-code'] ?? statusCodeIn(diagnostic ?? '');
  if (e.event === 'failed') {
    return {
      ...base,
      kind: e.severity === 'permanent' ? 'hard-bounce' : 'soft-bounce',
      reason: MAILGUN_REASONS[e.reason ?? ''] ?? null,
      status: code ?? null,
      diagnostic,
    };
  }
  if (e.event === 'complained')
    return { ...base, kind: 'complaint', status: null, diagnostic: 'feedback-type abuse' };
  if (e.event === 'delivered') return { ...base, kind: 'delivered', status: code ?? null, diagnostic };
  return undefined;
}

function merge(receipts: InboundReceipt[]): InboundReceipt {
  const effects = receipts.flatMap((r) => r.effects);
  const outcome = effects.some((e) => e.applied) ? 'applied' : effects.length > 0 ? 'duplicate' : 'ignored';
  const first = receipts.find((r) => r.reason);
  return {
    outcome,
    report: 'notification',
    effects,
    ...(outcome === 'ignored' && first?.reason ? { reason: first.reason } : {}),
    // Set: each signal was counted when it was applied (see `MailroomInbound.notification`).
    ...(outcome === 'ignored' ? { code: first?.code ?? 'not-a-bounce' } : {}),
  };
}
