/**
 * Amazon SNS messages (how SES bounce and complaint notifications arrive over HTTP): their signature
 * checked against the signing certificate named in the message, which is fetched only from an
 * `https://sns.<region>.amazonaws.com/` URL through the guarded fetcher, and cached.
 */
import { createVerify, X509Certificate } from 'node:crypto';
import { MailroomError } from '../base/errors.js';
import type { GuardedFetcher } from '../fetch/fetch-types.js';

/** The fields of an SNS message that the engine reads. */
export interface SnsMessage {
  Type: 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: '1' | '2';
  Signature: string;
  SigningCertURL: string;
  Subject?: string;
  SubscribeURL?: string;
  Token?: string;
}

/** Where SNS signing certificates may come from: Amazon's SNS hosts, over https, a `.pem` path. */
export const SNS_CERTIFICATE_URL =
  /^https:\/\/sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\/[A-Za-z0-9._/-]+\.pem$/;

/** How long a fetched certificate is trusted without fetching it again. */
const CERTIFICATE_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * Messages older than this are refused. SNS retries a message with its original timestamp and signature
 * (for hours under a custom delivery policy), so the window is wide; a replay inside it changes nothing,
 * since each signal is applied once.
 */
const MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** Checks SNS messages' signatures; certificates are cached per URL. */
export interface SnsVerifier {
  /** The message if its signature is valid and fresh; `UNAUTHORIZED` for anything else. */
  verify(body: unknown, now: Date): Promise<SnsMessage>;
}

/** A verifier fetching certificates through `fetcher`, from URLs matching `certificateUrl`. */
export function createSnsVerifier(
  fetcher: GuardedFetcher,
  certificateUrl: RegExp = SNS_CERTIFICATE_URL,
): SnsVerifier {
  const certificates = new Map<string, { until: number; pem: Promise<string> }>();

  function certificate(url: string): Promise<string> {
    const now = Date.now();
    const hit = certificates.get(url);
    if (hit && hit.until > now) return hit.pem;
    const pem = (async () => {
      const res = await fetcher.fetch(url, { maxBytes: 64 * 1024, timeoutMs: 10_000 });
      const body = await res.bytes();
      if (res.status !== 200) throw new Error(`certificate fetch answered ${res.status}`);
      const text = body.toString('utf8');
      const cert = new X509Certificate(text);
      if (new Date(cert.validTo).getTime() < now) throw new Error('the signing certificate has expired');
      return text;
    })();
    pem.catch(() => certificates.delete(url));
    if (certificates.size > 64) certificates.clear();
    certificates.set(url, { until: now + CERTIFICATE_TTL_MS, pem });
    return pem;
  }

  return {
    async verify(body, now) {
      const message = shapeOf(body);
      if (!certificateUrl.test(message.SigningCertURL))
        throw unauthorized('signing certificate URL not allowed');
      const age = now.getTime() - Date.parse(message.Timestamp);
      if (!(Math.abs(age) <= MAX_AGE_MS)) throw unauthorized('message too old');
      let pem: string;
      try {
        pem = await certificate(message.SigningCertURL);
      } catch (error) {
        throw new MailroomError(
          'UNAUTHORIZED',
          'Invalid SNS signature: the signing certificate could not be fetched',
          { cause: error },
        );
      }
      const verifier = createVerify(message.SignatureVersion === '2' ? 'RSA-SHA256' : 'RSA-SHA1');
      verifier.update(stringToSign(message), 'utf8');
      let ok = false;
      try {
        ok = verifier.verify(pem, message.Signature, 'base64');
      } catch {
        ok = false;
      }
      if (!ok) throw unauthorized('signature mismatch');
      return message;
    },
  };
}

/** The string SNS signs (its documented field order; Subject only when present). */
export function stringToSign(m: SnsMessage): string {
  const fields =
    m.Type === 'Notification'
      ? [
          'Message',
          'MessageId',
          ...(m.Subject === undefined ? [] : ['Subject']),
          'Timestamp',
          'TopicArn',
          'Type',
        ]
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return fields.map((f) => `${f}\n${(m as unknown as Record<string, string>)[f] ?? ''}\n`).join('');
}

function shapeOf(body: unknown): SnsMessage {
  const m = body as Partial<Record<keyof SnsMessage, unknown>> | null;
  const str = (v: unknown) => typeof v === 'string';
  if (
    !m ||
    typeof m !== 'object' ||
    !['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'].includes(m.Type as string) ||
    !str(m.MessageId) ||
    !str(m.TopicArn) ||
    !str(m.Message) ||
    !str(m.Timestamp) ||
    !str(m.Signature) ||
    !str(m.SigningCertURL) ||
    (m.SignatureVersion !== '1' && m.SignatureVersion !== '2') ||
    (m.Subject !== undefined && !str(m.Subject)) ||
    (m.Type !== 'Notification' && (!str(m.SubscribeURL) || !str(m.Token)))
  ) {
    throw unauthorized('not a signed SNS message');
  }
  return m as SnsMessage;
}

function unauthorized(why: string): MailroomError {
  return new MailroomError('UNAUTHORIZED', `Invalid SNS message: ${why}`);
}
