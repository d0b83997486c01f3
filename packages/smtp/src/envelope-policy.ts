import type { MailroomInbound, MailroomReceiving } from '@mailroom/core';
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import type { ForgedTokens } from './forged-tokens.js';
import { type InboundLimits, RATE_WINDOW_MS } from './inbound-limits.js';
import { ipOf, smtpReply } from './listener-reply.js';
import { rateBuckets } from './rate-buckets.js';

/** The listener's MAIL FROM and RCPT TO policy: sizes, rates, the bounce domain, forged tokens. */
export interface EnvelopePolicy {
  /** smtp-server's `onMailFrom`: refuses a declared size over the cap (552) and a client over its rate (451). */
  onMailFrom(address: SMTPServerAddress, session: SMTPServerSession, callback: (error?: Error) => void): void;
  /**
   * smtp-server's `onRcptTo`: refuses a recipient outside the bounce domain (550: never an open relay),
   * one past `maxRecipients` (452), and a forged token once the client's allowance is spent (550).
   */
  onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (error?: Error) => void): void;
}

/** What {@link envelopePolicy} uses. */
export interface EnvelopePolicyParts {
  readonly inbound: MailroomInbound;
  readonly receiving?: MailroomReceiving | undefined;
  readonly limits: InboundLimits;
  readonly forged: ForgedTokens;
}

/** The envelope policy of a listener, with its per-IP message rate. */
export function envelopePolicy({ inbound, receiving, limits, forged }: EnvelopePolicyParts): EnvelopePolicy {
  const { logger, maxBytes, isTrusted, maxRecipients } = limits;
  const messages = rateBuckets(limits.maxPerMinute, RATE_WINDOW_MS);
  return {
    onMailFrom(address, session, callback) {
      const ip = ipOf(session);
      const declared = Number((address.args as { SIZE?: unknown } | undefined)?.SIZE ?? 0);
      if (declared > maxBytes) {
        inbound.refused('too-large', { remoteAddress: ip });
        return callback(smtpReply(552, `5.3.4 Message too big (limit ${maxBytes} bytes)`));
      }
      if (!isTrusted(session.remoteAddress) && !messages.take(ip, Date.now())) {
        inbound.refused('rate-limited', { remoteAddress: ip });
        return callback(smtpReply(451, '4.7.1 Too many messages, slow down'));
      }
      callback();
    },
    onRcptTo(address, session, callback) {
      const bounceDomain = inbound.enabled && inbound.acceptsRecipient(address.address);
      if (!bounceDomain && receiving) {
        if (session.envelope.rcptTo.length >= maxRecipients)
          return callback(smtpReply(452, '4.5.3 Too many recipients'));
        receiving.routes(address.address).then(
          (routed) => {
            if (routed) return callback();
            logger.warn(
              { remoteAddress: ipOf(session), rcptTo: address.address },
              'inbound SMTP: recipient outside the bounce domain refused (no receiving route takes it)',
            );
            callback(smtpReply(550, '5.1.1 No such recipient here: no route takes it'));
          },
          (error: unknown) => {
            logger.error({ err: error, rcptTo: address.address }, 'inbound SMTP: routes could not be read');
            callback(smtpReply(451, '4.3.0 Temporary failure, try again later'));
          },
        );
        return;
      }
      if (!bounceDomain) {
        logger.warn(
          { remoteAddress: ipOf(session), rcptTo: address.address },
          'inbound SMTP: recipient outside the bounce domain refused',
        );
        return callback(
          smtpReply(550, '5.7.1 Relaying denied: this server takes mail for its bounce domain only'),
        );
      }
      if (session.envelope.rcptTo.length >= maxRecipients)
        return callback(smtpReply(452, '4.5.3 Too many recipients'));
      const refusing = forged.refuseAtRcpt(address.address, session);
      if (!refusing) return callback();
      void refusing.then((refusal) => callback(refusal));
    },
  };
}
