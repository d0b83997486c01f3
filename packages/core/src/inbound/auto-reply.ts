/**
 * Automatic replies that are not bounces: out-of-office and vacation notices (RFC 3834 `Auto-Submitted`,
 * and the headers and subjects of common responders) and challenge-response systems asking the sender
 * to prove itself. Read only after the message was found to be no DSN, ARF report or MTA notice: MTAs
 * mark their bounces `Auto-Submitted: auto-replied` too.
 */

import { DAEMON_SENDER } from './text-bounce.js';

/** The headers and words an auto-reply is recognised from. */
export interface ReplyTraits {
  /** Header values by lower-cased name. */
  header(name: string): string | undefined;
  subject: string;
  text: string;
  /** The From header's address and name. */
  from?: string;
}

const OOO_SUBJECT =
  /^(out of (the )?office|automatic reply|auto(matic)?[- ]?(reply|response)|autoreply|vacation|away from|abwesenheit|absence|r[ée]ponse automatique)\b/i;
const OOO_TEXT = /\b(I am|I'm) (currently )?(out of (the )?office|on (vacation|holiday|leave)|away)\b/i;
const CHALLENGE =
  /\b(verify|confirm) (that )?(you are|you're) (a )?(human|real|not a robot)|(spam ?arrest|boxtrapper|mailsbestfriend|challenge[- ]response)|approved senders list|click (the link )?below to (verify|confirm|be added)/i;

/** Why `m` is an automatic reply (not a bounce), or undefined when it does not look like one. */
export function autoReplyReason(m: ReplyTraits): string | undefined {
  if (CHALLENGE.test(m.subject) || CHALLENGE.test(m.text)) return 'challenge-response';
  // MTAs and list servers (Google Groups) mark their rejections `Auto-Submitted` too: that header alone
  // makes no auto-reply of a message from a mail daemon or one naming failed recipients.
  const fromDaemon = DAEMON_SENDER.test(m.from ?? '') || Boolean(m.header('x-failed-recipients'));
  const submitted = m.header('auto-submitted');
  if (submitted && submitted.trim().toLowerCase() !== 'no' && !fromDaemon) {
    return `Auto-Submitted: ${submitted.trim()}`;
  }
  if (m.header('x-autoreply') || m.header('x-autorespond') || m.header('x-autoresponder'))
    return 'X-Autoreply';
  if (/^auto[_-]?reply$/i.test(m.header('precedence')?.trim() ?? '')) return 'Precedence: auto_reply';
  if (m.header('x-auto-response-suppress') && OOO_SUBJECT.test(m.subject)) return 'out of office';
  if (OOO_SUBJECT.test(m.subject) || OOO_TEXT.test(m.text)) return 'out of office';
  return undefined;
}
