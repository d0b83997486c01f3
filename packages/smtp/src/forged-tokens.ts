import type { MailroomInbound } from '@mailroom/core';
import type { SMTPServerSession } from 'smtp-server';
import { type InboundLimits, RATE_WINDOW_MS } from './inbound-limits.js';
import { ipOf, smtpReply } from './listener-reply.js';
import { rateBuckets } from './rate-buckets.js';
import { windowedLog } from './windowed-log.js';

/**
 * Messages to forged or edited return-path tokens: each address may have `maxForged` a minute taken
 * (with 250) and dropped unparsed; past that, such a recipient is refused at RCPT before any data.
 */
export interface ForgedTokens {
  /**
   * At RCPT: whether `rcptTo` is refused as a forged token because the client has used its allowance
   * (a 550 reply), else undefined. Asks the engine (one HMAC) only once the allowance is spent.
   */
  refuseAtRcpt(rcptTo: string, session: SMTPServerSession): Promise<Error | undefined> | undefined;
  /** After DATA: a message to forged tokens only was taken and dropped; counts it against the client. */
  taken(session: SMTPServerSession, envelopeTo: string[]): void;
}

/** What {@link forgedTokens} uses: the engine's inbound role and the listener's limits. */
export interface ForgedTokensParts {
  readonly inbound: MailroomInbound;
  readonly limits: InboundLimits;
}

/** The forged-token allowance of a listener, per client address, with its flood log. */
export function forgedTokens({ inbound, limits }: ForgedTokensParts): ForgedTokens {
  const { logger, isTrusted, maxForged, abuseLogWindowMs } = limits;
  const forgedLog = windowedLog(
    logger,
    'inbound SMTP: forged or edited return-path token ignored',
    abuseLogWindowMs,
  );
  // Forged tokens taken (and dropped) per address; past it they are refused at RCPT.
  const forgedTaken = rateBuckets(maxForged, RATE_WINDOW_MS);
  return {
    refuseAtRcpt(rcptTo, session) {
      const ip = ipOf(session);
      if (isTrusted(session.remoteAddress) || !forgedTaken.exhausted(ip, Date.now())) return undefined;
      // This address has used its allowance of forged tokens: the next one is refused here, unread.
      return inbound.recipientVerdict(rcptTo).then(
        (verdict) => {
          if (verdict !== 'forged') return undefined;
          forgedLog.note({ remoteAddress: ip, rcptTo });
          inbound.refused('forged-token', { remoteAddress: ip, envelopeTo: [rcptTo] });
          return smtpReply(550, '5.1.1 Return-path token not recognised');
        },
        // The key could not be loaded (the store down): the message takes the usual way.
        () => undefined,
      );
    },
    taken(session, envelopeTo) {
      if (!isTrusted(session.remoteAddress)) forgedTaken.take(ipOf(session), Date.now());
      forgedLog.note({ remoteAddress: ipOf(session), rcptTo: envelopeTo[0] });
      inbound.refused('forged-token', { remoteAddress: ipOf(session), envelopeTo });
    },
  };
}
