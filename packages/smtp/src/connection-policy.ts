import type { SMTPServerSession } from 'smtp-server';
import type { InboundLimits } from './inbound-limits.js';
import { ipOf, smtpReply } from './listener-reply.js';
import { windowedLog } from './windowed-log.js';

/** The listener's connection policy: connections open at once per IP address. */
export interface ConnectionPolicy {
  /** smtp-server's `onConnect`: refuses a connection past `maxPerIp` from one address with 421. */
  onConnect(session: SMTPServerSession, callback: (error?: Error) => void): void;
  /** smtp-server's `onClose`: frees the place of a connection it counted. */
  onClose(session: SMTPServerSession): void;
}

/** Counts the connections open per IP address (trusted relays excepted from the cap). */
export function connectionPolicy({
  logger,
  maxPerIp,
  isTrusted,
  abuseLogWindowMs,
}: InboundLimits): ConnectionPolicy {
  const crowdLog = windowedLog(
    logger,
    'inbound SMTP: too many connections from one address',
    abuseLogWindowMs,
  );
  const open = new Map<string, number>();
  // The sessions counted in `open`: the library calls onClose for refused connections too, and
  // decrementing for those would let every refusal admit one more connection past the cap.
  const counted = new Set<string>();
  return {
    onConnect(session, callback) {
      const ip = ipOf(session);
      const count = (open.get(ip) ?? 0) + 1;
      if (count > maxPerIp && !isTrusted(session.remoteAddress)) {
        crowdLog.note({ remoteAddress: ip, limit: maxPerIp });
        return callback(smtpReply(421, 'Too many connections from your address, try again later'));
      }
      open.set(ip, count);
      counted.add(session.id);
      callback();
    },
    onClose(session) {
      if (!counted.delete(session.id)) return;
      const ip = ipOf(session);
      const count = (open.get(ip) ?? 1) - 1;
      if (count <= 0) open.delete(ip);
      else open.set(ip, count);
    },
  };
}
