/**
 * Reading the human-readable words of a bounce notice: where the returned copy of the message starts, which
 * recipients the notice names and what it says about each, and at which SMTP command the remote server
 * refused. MTAs word this differently (Postfix, Exim, sendmail, qmail, Exchange, Notes, OpenSMTPD, the
 * Japanese carriers...), but almost all of them put each failed address at the start of a line and the
 * remote server's words after it: the reading here relies on that shape, not on one MTA's template.
 */
import type { SmtpCommand } from './inbound-report.js';
import { cleanAddress } from './report-fields.js';

/** What a notice says about one recipient. */
export interface NoticeBlock {
  /** The address, domain lower-cased. */
  address: string;
  /** The notice's words about it: from the line that names it to the next recipient's line. */
  text: string;
}

/** Where the returned copy of the message starts (nothing after it is the notice's own words). */
const RETURNED_COPY = new RegExp(
  [
    String.raw`^\s*-{2,}.*(below this line|copy of (the|your) message|original message|returned message|unsent message|message headers|rfc822|headers of the original).*$`,
    String.raw`^\s*-{2,}\s*(original|returned|unsent) (message|mail)\b.*$`,
    String.raw`^\s*(original message headers|original message follows|message headers follow|original mail as follows|below is a copy of the original message|the original message (headers )?(is|are|was) (attached|below|included)|\*\*\* original message follows|-* ?original message ?-*)\s*[:.]?\s*$`,
    String.raw`^\s*-+ ?Original message ?-+\s*$`,
  ].join('|'),
  'im',
);

/** The notice's own words and the returned copy, when the notice quotes it inline. */
export function splitReturnedCopy(text: string): { own: string; returned: string } {
  const cut = text.search(RETURNED_COPY);
  return cut < 0 ? { own: text, returned: '' } : { own: text.slice(0, cut), returned: text.slice(cut) };
}

// Bounded parts: an unbounded local part makes a long line without "@" cost quadratic time.
const ADDRESS = /[^\s<>"'():;,[\]@=]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+/g;

/**
 * A line names a recipient when the address opens it (after indentation, `<`, a quote, or a label such as
 * "Recipient:", "Could not be delivered to:", "Unable to deliver message to"), not when it is quoted in
 * the middle of the remote server's words.
 */
const RECIPIENT_LINE = new RegExp(
  [
    String.raw`^[\s>*"'(]*(?:[45]\d\d[ -]+(?=<))?(?:(?:original |final )?recipient(?:\(s\))?(?: address)?:|rcpt to:|could not be delivered to:?|there was an error delivering your mail to|unable to deliver (?:the )?message to:?|delivery to the following recipients? (?:failed|has been delayed)[^:]*:|failed recipient:|address:|your message to|to the following address(?:es)?:)?[\s<"']*`,
    `(${ADDRESS.source})`,
  ].join(''),
  'i',
);

/** Addresses a notice names that are never the failed recipient. */
const NOT_A_RECIPIENT =
  /^(mailer-daemon|postmaster|post_master|no-?reply|noreply|root|daemon|mail-daemon|mailerdaemon|abuse)@/i;

/**
 * The recipients `own` names, in order, with what it says about each; `exclude` lists addresses that are
 * not recipients (the notice's own From and To, which is the bounced message's sender).
 */
export function noticeBlocks(own: string, exclude: readonly string[] = []): NoticeBlock[] {
  const skip = new Set(exclude.map((a) => a.toLowerCase()));
  const lines = own.split(/\r?\n/);
  const starts: Array<{ line: number; address: string }> = [];
  for (const [i, line] of lines.entries()) {
    if (/^\s*(from|mail from|reply-to|sender|return-path|sent by|envelope-from)\s*:/i.test(line)) continue;
    const m = RECIPIENT_LINE.exec(line);
    if (!m) continue;
    const address = cleanAddress(m[1] as string);
    if (!address || NOT_A_RECIPIENT.test(address) || skip.has(address.toLowerCase())) continue;
    if (/\.(png|gif|jpe?g)$/i.test(address)) continue;
    starts.push({ line: i, address });
  }
  const byAddress = new Map<string, string>();
  for (const [k, start] of starts.entries()) {
    // A transcript line that opens with the reply ("554 <ann@example.org>... Host unknown", sendmail)
    // closes its recipient's part: the exchange that led to it comes before it. Otherwise the words
    // about a recipient follow its line.
    const closing = /^\s*[45]\d\d[ -]/.test(lines[start.line] as string);
    const from = closing ? (starts[k - 1]?.line ?? -1) + 1 : start.line;
    const end = closing ? start.line + 1 : (starts[k + 1]?.line ?? lines.length);
    const text = lines.slice(from, end).join('\n');
    const key = start.address.toLowerCase();
    byAddress.set(key, byAddress.has(key) ? `${byAddress.get(key)}\n${text}` : text);
  }
  const seen = new Set<string>();
  const blocks: NoticeBlock[] = [];
  for (const { address } of starts) {
    const key = address.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    blocks.push({ address, text: byAddress.get(key) as string });
  }
  return blocks;
}

/** Every address `text` mentions, domain lower-cased, in order and without repeats. */
export function addressesIn(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(ADDRESS)) {
    const address = cleanAddress(m[0]);
    if (address && !out.some((a) => a.toLowerCase() === address.toLowerCase())) out.push(address);
  }
  return out;
}

const COMMAND_WORDS: Array<[SmtpCommand, RegExp]> = [
  [
    'DATA',
    /in reply to (end of )?data command|after (end of )?data\b|smtp command:? data\b|(final|end of) data\b|>>> (data|\.)\s*$|\(data\)|failed after i sent the message|after sending (the )?message|message body|after (the )?(message|data) (was|has been) (sent|transmitted)|(data|message) (was )?(rejected|refused)/im,
  ],
  [
    'RCPT',
    /in reply to rcpt to command|after (pipelined )?rcpt( to)?\b|most progress was rcpt to|smtp:rcpt\b|\[rcpt_to\]|>>> rcpt to|rcpt to:?\s*<[^>]*>.*\n\s*<<< [45]|does not like recipient|did not like our rcpt|\(rcpt\)|recipient address rejected/im,
  ],
  [
    'MAIL',
    /in reply to mail from command|after mail( from)?\b|\[mail_from\]|>>> mail from|sender was rejected|did not like our mail from|\(mail from\)|sender address rejected/im,
  ],
  [
    'HELO',
    /in reply to (ehlo|helo) command|after (ehlo|helo)|>>> (ehlo|helo)|while performing the (ehlo|helo)|my name was rejected/im,
  ],
  [
    'CONN',
    /after initial connection|greeting failed|while receiving the initial server greeting|(in reply to|after) (the )?(initial )?(greeting|banner)|connect(ion)? to .* (refused|timed out)/im,
  ],
];

/** The SMTP command `text` says the remote server refused, or null. */
export function smtpCommandIn(text: string): SmtpCommand | null {
  // A transcript (">>> RCPT TO" then "<<< 550") names the command of its last exchange.
  const transcript = [
    ...text.matchAll(/^\s*>>> ?(mail from|rcpt to|data|ehlo|helo)\b[^\n]*\n\s*<<< ?[45]\d\d/gim),
  ];
  const last = transcript.at(-1)?.[1]?.toLowerCase();
  if (last)
    return last === 'mail from' ? 'MAIL' : last === 'rcpt to' ? 'RCPT' : last === 'data' ? 'DATA' : 'HELO';
  const flat = text.replace(/\s+/g, ' ');
  // Gmail names the state its SMTP client was in when refused.
  const state = /\(state (\d+)\)/i.exec(flat)?.[1];
  if (state) return gmailState(Number(state));
  for (const [command, re] of COMMAND_WORDS) if (re.test(flat)) return command;
  return null;
}

/** The command of a state of Gmail's SMTP client (its notices say "(state 14)"). */
function gmailState(state: number): SmtpCommand {
  if (state >= 17) return 'DATA';
  if (state >= 14) return 'RCPT';
  if (state >= 9) return 'MAIL';
  return 'HELO';
}

/** The first SMTP reply code (`550`) in `text`, or null. */
export function replyCodeIn(text: string): string | null {
  const m = /(?:^|[\s:;'"([-])([45][0-5]\d)(?=[ \-.]|$)(?![.\d]*@)/m.exec(text);
  return m ? (m[1] as string) : null;
}
