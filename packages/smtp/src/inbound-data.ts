import type { MailroomInbound, MailroomReceiving } from '@mailroom/core';
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { ForgedTokens } from './forged-tokens.js';
import { headerGuard } from './header-guard.js';
import type { InboundLimits } from './inbound-limits.js';
import { ipOf, smtpReply } from './listener-reply.js';
import { windowedLog } from './windowed-log.js';

/** What {@link inboundData} uses. */
export interface InboundDataParts {
  readonly inbound: MailroomInbound;
  readonly receiving?: MailroomReceiving | undefined;
  readonly limits: InboundLimits;
  readonly forged: ForgedTokens;
}

/** The DATA of one message: its stream read under the caps, then handed to the engine. */
export type InboundData = (stream: SMTPServerDataStream, session: SMTPServerSession) => Promise<string>;

/**
 * The listener's DATA handling: reads the message under the size and header caps (refused with 552 past
 * them), drops unparsed a message to forged tokens only, and hands the rest to `inbound.receive`.
 * Resolves to the 250 reply's text; rejects with the reply to give (552, or 451 when the engine defers).
 */
export function inboundData({ inbound, receiving, limits, forged }: InboundDataParts): InboundData {
  const { logger, maxBytes, maxHeaderLines, maxHeaderBytes } = limits;
  const headerLog = windowedLog(
    logger,
    'inbound SMTP: message header over the cap refused',
    limits.abuseLogWindowMs,
  );

  return async function receive(stream, session) {
    const all = session.envelope.rcptTo.map((r) => r.address);
    // Recipients outside the bounce domain got here through a receiving route (RCPT refused the rest).
    const envelopeTo = inbound.enabled ? all.filter((to) => inbound.acceptsRecipient(to)) : [];
    const routedTo = all.filter((to) => !envelopeTo.includes(to));
    // Decided before a byte is kept: when every recipient is a return path whose token fails its MAC (one
    // HMAC each, no store read), the message is drained unparsed. It is still taken with 250, as every
    // ignored message is: refusing a null-sender report gains nothing, and a bounce processor never
    // bounces what it ignores.
    // A failure to load the key (the store down) decides nothing here: the message takes the usual way.
    const verdicts = await Promise.all(
      envelopeTo.map((to) => inbound.recipientVerdict(to).catch(() => 'accept' as const)),
    );
    const allForged = routedTo.length === 0 && verdicts.length > 0 && verdicts.every((v) => v === 'forged');
    const chunks: Buffer[] = [];
    let bytes = 0;
    const header = headerGuard(maxHeaderLines, maxHeaderBytes);
    let keep = !allForged;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      // Past a cap the rest is read and dropped (the client is still sending it); what was kept goes.
      if (keep && (bytes > maxBytes || !header.feed(chunk))) {
        keep = false;
        chunks.length = 0;
      }
      if (keep) chunks.push(chunk);
    }
    const log = { remoteAddress: ipOf(session), bytes };
    if (header.problem) {
      headerLog.note({ ...log, problem: header.problem, maxHeaderLines, maxHeaderBytes });
      inbound.refused('header-too-large', { remoteAddress: ipOf(session) });
      throw smtpReply(
        552,
        `5.3.4 Message header too large (at most ${maxHeaderLines} lines, ${maxHeaderBytes} bytes)`,
      );
    }
    if (stream.sizeExceeded || bytes > maxBytes) {
      inbound.refused('too-large', { remoteAddress: ipOf(session) });
      throw smtpReply(552, `5.3.4 Message too big (limit ${maxBytes} bytes)`);
    }
    if (allForged) {
      forged.taken(session, envelopeTo);
      return 'Ok: ignored (forged or edited return-path token)';
    }
    const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const raw = Buffer.concat(chunks);
    // The bounce domain's part first: when it defers (451), nothing routed has been stored yet, so the
    // client's retry stores the routed part once. (A report and an app's mail in one message are rare.)
    let bounced = '';
    if (envelopeTo.length > 0) {
      try {
        const receipt = await inbound.receive(raw, {
          envelopeTo,
          envelopeFrom,
          remoteAddress: ipOf(session),
        });
        // Taken either way: a bounce processor never bounces what it ignores (that would loop).
        bounced = receipt.outcome;
      } catch (error) {
        const deferred = (error as { code?: unknown } | null)?.code === 'INBOUND_DEFERRED';
        if (deferred) logger.info(log, 'inbound SMTP: report arrived before the send was recorded; deferred');
        else logger.error({ ...log, err: error }, 'inbound SMTP: message could not be processed; deferred');
        throw smtpReply(451, '4.3.0 Temporary failure, try again later');
      }
    }
    if (!receiving || routedTo.length === 0) return `Ok: ${bounced}`;
    try {
      const receipt = await receiving.receive(raw, {
        envelopeFrom,
        envelopeTo: routedTo,
        remoteAddress: ipOf(session),
        helo: session.hostNameAppearsAs,
      });
      return `Ok: received ${receipt.messageIds.join(' ')}${bounced ? `; ${bounced}` : ''}`;
    } catch (error) {
      // Past a routed project's own cap (smaller than the listener's): refused for good, nothing stored.
      if ((error as { code?: unknown } | null)?.code === 'PAYLOAD_TOO_LARGE') {
        inbound.refused('too-large', { remoteAddress: ipOf(session) });
        throw smtpReply(552, `5.3.4 ${(error as Error).message}`);
      }
      logger.error({ ...log, err: error }, 'inbound SMTP: routed message could not be stored; deferred');
      throw smtpReply(451, '4.3.0 Temporary failure, try again later');
    }
  };
}
