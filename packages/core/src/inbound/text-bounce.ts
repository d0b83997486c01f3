/**
 * Plain-text bounces: notices from MTAs that send no `message/delivery-status` part (or whose report is
 * lost by a forwarder), recognised from the wording their documentation gives: Postfix ("This is the mail
 * system at host"), Exim ("This message was created automatically by mail delivery software"), qmail
 * ("This is the qmail-send program"), Microsoft Exchange ("Delivery has failed to these recipients"),
 * Gmail ("Address not found", "Your message wasn't delivered"), and the generic phrases of many others.
 */
import type { BounceClass, BounceRecipient, InboundReport } from './inbound-report.js';
import { cleanAddress, messageIdField, oneLine, statusCodeIn } from './report-fields.js';

/** What a plain-text notice is read from. */
export interface TextNotice {
  /** The From header's address and name. */
  from: string;
  subject: string;
  /** The plain-text body. */
  text: string;
  /** Headers of a returned message attached to the notice, when there is one. */
  returnedMessageId: string | null;
}

const DAEMON_SENDER =
  /mailer-daemon|postmaster|mail delivery (subsystem|system)|microsoftexchange|mail administrator/i;

const BOUNCE_SUBJECT =
  /undeliver|delivery status notification|failure notice|returned mail|delivery failure|mail delivery failed|delivery has failed|could not be delivered|not delivered|delivery incomplete|warning: message .* delayed|address not found|nondeliverable|non-delivery/i;

/** Lines that only an MTA's own bounce template contains. */
const MTA_SIGNATURE = [
  /this is the mail system at host/i,
  /I'm sorry to have to inform you that your message could not\s+be delivered/i,
  /this message was created automatically by mail delivery software/i,
  /this is the qmail-send program/i,
  /I wasn't able to deliver your message to the following addresses/i,
  /delivery has failed to these recipients or groups/i,
  /diagnostic information for administrators/i,
  /your message wasn't delivered to .+ because/i,
  /there was a temporary problem delivering your message/i,
];

/** Wording of a failed delivery in general. */
const FAILURE_WORDS =
  /could not be delivered|couldn't be delivered|wasn't delivered|was not delivered|permanent error|permanent fatal error|user unknown|unknown user|no such user|no mailbox here|mailbox unavailable|does not exist|address not found|recipient address rejected|not yet been delivered|delivery to the following recipients? failed|delayed|undeliverable/i;

const DELAY_WORDS =
  /not yet been delivered|has been delayed|delivery (is )?delayed|will (continue to )?(retry|try)|temporary (problem|failure|error)|delivery incomplete|try again later/i;

const FULL_WORDS = /mailbox (is )?full|inbox is full|over quota|quota exceeded|insufficient storage/i;

/** Where the returned copy of the message starts in a notice (nothing after it is the notice's own words). */
const RETURNED_COPY =
  /^(-{2,}.*(below this line|copy of the message|original message|returned message|message headers).*|--- Below this line is a copy of the message\.|Original message headers:|----- Original message -----)\s*$/im;

/** The report of a plain-text bounce, or undefined when `notice` does not read as one. */
export function readTextBounce(notice: TextNotice): InboundReport | undefined {
  const signed = MTA_SIGNATURE.some((re) => re.test(notice.text));
  const looks = DAEMON_SENDER.test(notice.from) || BOUNCE_SUBJECT.test(notice.subject);
  if (!signed && !(looks && FAILURE_WORDS.test(notice.text))) return undefined;
  const cut = notice.text.search(RETURNED_COPY);
  const own = cut < 0 ? notice.text : notice.text.slice(0, cut);
  const returned = cut < 0 ? '' : notice.text.slice(cut);
  const status = statusCodeIn(own);
  const reply = /\b([45]\d\d)[ -]/.exec(own)?.[1] ?? null;
  const recipient: BounceRecipient = {
    address: failedAddress(own, notice.from),
    originalAddress: null,
    action: 'failed',
    status,
    diagnostic: oneLine(diagnosticLine(own)),
    class: classOf(own, notice.subject, status, reply),
  };
  if (recipient.class === 'soft') recipient.action = DELAY_WORDS.test(own) ? 'delayed' : 'failed';
  const inlineId = messageIdField(/^Message-ID:\s*(.+)$/im.exec(returned)?.[1]);
  return {
    type: 'bounce',
    format: 'text-bounce',
    recipients: [recipient],
    originalMessageId: notice.returnedMessageId ?? inlineId,
  };
}

function classOf(own: string, subject: string, status: string | null, reply: string | null): BounceClass {
  if (status) return status.startsWith('5.') && status !== '5.2.2' ? 'hard' : 'soft';
  if (DELAY_WORDS.test(own) || DELAY_WORDS.test(subject) || FULL_WORDS.test(own)) return 'soft';
  if (reply) return reply.startsWith('5') ? 'hard' : 'soft';
  return 'hard';
}

/** The first address the notice names that is not the daemon's own. */
function failedAddress(own: string, from: string): string | null {
  for (const m of own.matchAll(/<?([^\s<>"'():;,[\]@]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)>?/g)) {
    const address = cleanAddress(m[1] as string);
    if (!address || DAEMON_SENDER.test(address) || from.toLowerCase().includes(address.toLowerCase()))
      continue;
    return address;
  }
  return null;
}

/** The remote server's reply, as the notice quotes it: the line with a status or reply code. */
function diagnosticLine(own: string): string | undefined {
  const lines = own.split(/\r?\n/);
  const i = lines.findIndex((l) => /\b[45]\.\d{1,3}\.\d{1,3}\b|\b[45]\d\d[ -]/.test(l));
  if (i < 0) return lines.find((l) => FAILURE_WORDS.test(l));
  // The reply often goes on over indented lines.
  let text = lines[i] as string;
  for (let j = i + 1; j < lines.length && /^\s+\S/.test(lines[j] as string); j++) text += ` ${lines[j]}`;
  return text;
}
