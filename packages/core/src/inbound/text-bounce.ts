/**
 * Plain-text bounces: notices from MTAs that send no `message/delivery-status` part (or whose report is
 * lost by a forwarder), recognised from the wording their documentation gives: Postfix ("This is the mail
 * system at host"), Exim ("This message was created automatically by mail delivery software"), qmail
 * ("This is the qmail-send program"), Microsoft Exchange ("Delivery has failed to these recipients", "did
 * not reach the following recipient(s)"), Lotus Notes ("Failure Reasons"), OpenSMTPD ("This is the
 * MAILER-DAEMON"), Gmail ("Address not found", "Your message wasn't delivered"), Google Groups, the
 * Japanese carriers, and the generic phrases of many others. A notice is a bounce when it carries an MTA's
 * signature, an `X-Failed-Recipients` header, or comes from a mail daemon (or under a bounce subject) and
 * says a delivery failed.
 */
import type { BounceClass, BounceRecipient, InboundReport } from './inbound-report.js';
import {
  addressesIn,
  type NoticeBlock,
  noticeBlocks,
  replyCodeIn,
  smtpCommandIn,
  splitReturnedCopy,
} from './notice-text.js';
import { cleanAddress, messageIdField, oneLine } from './report-fields.js';

/** What a plain-text notice is read from. */
export interface TextNotice {
  /** The From header's address and name. */
  from: string;
  subject: string;
  /** The plain-text body. */
  text: string;
  /** Headers of a returned message attached to the notice, when there is one. */
  returnedMessageId: string | null;
  /** The notice's To header (the bounced message's sender: never a failed recipient). */
  to?: string;
  /** The `X-Failed-Recipients` header (Exim, Gmail), when present. */
  failedRecipients?: string;
  /** The returned message's To header, when the notice carries the message. */
  returnedTo?: string | null;
}

/** Senders of bounce notices. */
export const DAEMON_SENDER =
  /mailer-daemon|mailer_daemon|postmaster|post_master|mail delivery (subsystem|system)|mail deliver system|microsoftexchange|mail administrator|system administrator|mail system|interscan|^\s*<?>?\s*$/i;

/** Subjects of bounce notices, in the languages the common MTAs and providers use. */
export const BOUNCE_SUBJECT =
  /undeliver|delivery status notification|failure notice|returned mail|delivery failure|mail delivery failed|delivery has failed|could not be delivered|not delivered|delivery incomplete|warning: message .* delayed|warning: could not send|delayed mail|address not found|nondeliverable|non-delivery|non remis|unzustellbar|nicht zustellbar|no entregado|mail system error|mail failure|delivery notification|delivery status|delivery report|mail could not be delivered|message delivery has failed|error sending your mail|could not send|not member|loop alert|メールエラー|不達|配信エラー|送信エラー|エラー通知/i;

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
  /this is the mailer-daemon, please do not reply to this e-mail/i,
  /an error has occurred while attempting to deliver a message/i,
  /did not reach (the following|some or all of the intended) recipient/i,
  /^-{3,} ?failure reasons ?-{3,}/im,
  /----- the following addresses had (permanent fatal errors|delivery problems|delivery errors) -----/i,
  /---the following addresses had delivery errors---/i,
  /----- transcript of session follows -----/i,
  /this is the dragonfly mail agent/i,
  /there was an error delivering your mail to/i,
  /delivery to the following recipients? (failed|has been delayed)/i,
  /your message cannot be delivered to the following recipients/i,
  /could not be delivered to:/i,
  /unable to deliver message to/i,
  /error: invalid user address/i,
  /each of the following recipients was rejected by a remote mail server/i,
  /the following recipients returned permanent errors/i,
  /your mail message to the following address\(es\) could not be delivered/i,
  /message from interscan messaging security suite/i,
  /^\s*(invalid final delivery userid|user mailbox exceeds allowed size|unknown user|host unknown|message could not be delivered within)/im,
  /we('re| are) writing to let you know that the group you tried to contact/i,
  /the group you tried to contact \(.*\) may not exist/i,
  /連絡しようとしたグループ/,
  /sorry, we were unable to deliver your message to the following address/i,
];

/** Wording of a failed delivery in general. */
const FAILURE_WORDS =
  /could not be delivered|couldn't be delivered|cannot be delivered|can't be delivered|wasn't delivered|was not delivered|not been delivered|unable to deliver|could not deliver|error delivering|delivery (has )?failed|failed (permanently|delivery)|permanent error|permanent fatal error|user unknown|unknown user|no such user|no mailbox here|mailbox unavailable|does not exist|address not found|recipient address rejected|delivery to the following recipients? failed|delayed|undeliverable|did not reach|rejected|not a member|not member|failure reasons|could not send|mailbox is full|error|over quota|aborted|could not find a gateway|malformed|loop alert|duplicated message-id|送信できません|届きません|配信できません|エラー/i;

const DELAY_WORDS =
  /not yet been delivered|has been delayed|delivery (is )?delayed|is delayed|will (continue to )?(retry|try)|temporary (problem|failure|error)|delivery incomplete|try again later|still being retried|could not send message for past/i;

const FULL_WORDS = /mailbox (is )?full|inbox is full|over quota|quota exceeded|insufficient storage/i;

/** Whether `notice` comes from a mail system: an MTA's template, a daemon sender or failed recipients. */
export function isDaemonNotice(notice: TextNotice): boolean {
  const { own } = splitReturnedCopy(notice.text);
  return (
    DAEMON_SENDER.test(notice.from) ||
    Boolean(notice.failedRecipients?.includes('@')) ||
    MTA_SIGNATURE.some((re) => re.test(own))
  );
}

/** Whether `notice` reads as a bounce notice at all (its own words, before any returned copy). */
export function looksLikeBounceNotice(notice: TextNotice): boolean {
  const { own } = splitReturnedCopy(notice.text);
  if (MTA_SIGNATURE.some((re) => re.test(own))) return true;
  if (notice.failedRecipients?.includes('@')) return true;
  const looks = DAEMON_SENDER.test(notice.from) || BOUNCE_SUBJECT.test(notice.subject);
  return looks && (FAILURE_WORDS.test(own) || FAILURE_WORDS.test(notice.subject));
}

/** The report of a plain-text bounce, or undefined when `notice` does not read as one. */
export function readTextBounce(notice: TextNotice): InboundReport | undefined {
  if (!looksLikeBounceNotice(notice)) return undefined;
  const { own, returned } = splitReturnedCopy(notice.text);
  const recipients = recipientsOf(notice, own).map(({ address, block, text }) => {
    const status = failureStatusIn(block) ?? failureStatusIn(text);
    const reply = replyCodeIn(block) ?? replyCodeIn(text);
    const recipient: BounceRecipient = {
      address,
      originalAddress: null,
      action: 'failed',
      status,
      diagnostic: oneLine(diagnosticLine(block) ?? diagnosticLine(text)),
      class: classOf(text, notice.subject, status, reply),
      replyCode: reply,
      command: smtpCommandIn(block) ?? smtpCommandIn(text),
      notice: noticeWords(text),
    };
    if (DELAY_WORDS.test(text) || /\bdelay/i.test(notice.subject)) {
      if (!/permanent (error|failure)|failed permanently|given up|giving up|no further/i.test(text)) {
        recipient.action = 'delayed';
      }
    }
    return recipient;
  });
  const inlineId = messageIdField(/^\s*Message-ID:\s*(.+)$/im.exec(returned)?.[1]);
  return {
    type: 'bounce',
    format: 'text-bounce',
    recipients,
    originalMessageId: notice.returnedMessageId ?? inlineId,
  };
}

/**
 * The failed recipients and the words about each: the addresses the notice puts at the start of a line
 * (`X-Failed-Recipients` decides among them when present), else those of `X-Failed-Recipients`, else the
 * returned message's recipient. `block` is what follows the recipient's line; `text` what the notice
 * says about it (the whole notice for a lone recipient: the reason often comes before the address).
 */
function recipientsOf(
  notice: TextNotice,
  own: string,
): Array<{ address: string | null; block: string; text: string }> {
  const exclude = [...addressesIn(notice.from), ...addressesIn(notice.to ?? '')];
  let blocks = noticeBlocks(own, exclude);
  const failed = addressesIn(notice.failedRecipients ?? '');
  if (failed.length > 0) {
    const named = blocks.filter((b) => failed.some((f) => f.toLowerCase() === b.address.toLowerCase()));
    blocks = failed.map(
      (address) =>
        named.find((b) => b.address.toLowerCase() === address.toLowerCase()) ?? { address, text: own },
    );
  }
  if (blocks.length === 0) {
    // No line names a recipient: the first address the notice's words mention ("wasn't delivered to
    // ann@example.org because"), else the returned message's recipient.
    const skip = new Set(exclude.map((a) => a.toLowerCase()));
    const named = addressesIn(own).find((a) => !skip.has(a.toLowerCase()) && !DAEMON_SENDER.test(a));
    const returnedTo = notice.returnedTo ? cleanAddress(notice.returnedTo) : null;
    return [{ address: named ?? returnedTo, block: own, text: own }];
  }
  if (blocks.length === 1) {
    const only = blocks[0] as NoticeBlock;
    return [{ address: only.address, block: only.text, text: own }];
  }
  return blocks.map((b) => ({ address: b.address, block: b.text, text: b.text }));
}

/** The first 4.x.x or 5.x.x status in `text` (a quoted transcript also holds the 2.x.x of its successes). */
function failureStatusIn(text: string): string | null {
  const m = /\b([45])\.(\d{1,3})\.(\d{1,3})\b/.exec(text);
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

function classOf(own: string, subject: string, status: string | null, reply: string | null): BounceClass {
  if (status) return status.startsWith('5.') && status !== '5.2.2' ? 'hard' : 'soft';
  if (DELAY_WORDS.test(own) || DELAY_WORDS.test(subject) || FULL_WORDS.test(own)) return 'soft';
  if (reply) return reply.startsWith('5') ? 'hard' : 'soft';
  return 'hard';
}

/**
 * The remote server's reply, as the notice quotes it: the line with a status or reply code; else the
 * words that follow the recipient's line; else the first line saying that delivery failed.
 */
function diagnosticLine(own: string): string | undefined {
  const lines = own.split(/\r?\n/);
  const i = lines.findIndex((l) => /\b[45]\.\d{1,3}\.\d{1,3}\b|\b[45]\d\d[ -]/.test(l));
  if (i < 0) {
    const after = lines
      .slice(0, 4)
      .filter((l) => l.trim() !== '' && !/^\s*-{3,}/.test(l))
      .join(' ');
    return after.trim() !== '' ? after : lines.find((l) => FAILURE_WORDS.test(l));
  }
  // The reply often goes on over indented lines.
  let text = lines[i] as string;
  for (let j = i + 1; j < lines.length && /^\s+\S|^[45]\d\d-/.test(lines[j] as string); j++) {
    text += ` ${lines[j]}`;
  }
  return text;
}

/** The notice's words about a recipient, on one line, for the reason classifier (never stored). */
export function noticeWords(text: string): string | null {
  const line = text
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/\s{2,}/g, ' ')
    .trim();
  return line === '' ? null : line.slice(0, 2000);
}
