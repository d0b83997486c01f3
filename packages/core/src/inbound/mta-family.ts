/**
 * Which MTA or provider wrote a bounce notice, and which provider's server refused the message: a hint for
 * the reason classifier, whose wording and codes differ by family (a Japanese carrier's "User unknown"
 * after DATA is its recipient's filter; Microsoft's 5.7.6xx are blocked IPs; GoDaddy's IB codes name rate
 * limits under 5.1.1). Read from the notice's headers and words; never trusted for anything but that hint.
 */

/** What a family is told from. */
export interface FamilyTraits {
  /** Header values by lower-cased name (the first value of a repeated header). */
  header(name: string): string | undefined;
  from: string;
  subject: string;
  /** The notice's own words (text part). */
  text: string;
}

/** The families of the MTAs and providers that write notices, by the marks they leave. */
const NOTICE_FAMILIES: Array<[string, (t: FamilyTraits) => boolean]> = [
  [
    'googlegroups',
    (t) =>
      /googlegroups\.com/i.test(t.header('x-failed-recipients') ?? '') ||
      (/google groups/i.test(t.text) &&
        /group/i.test(t.text) &&
        /@googlemail\.com|@google\.com/i.test(t.from)),
  ],
  ['gmail', (t) => /mailer-daemon@(googlemail|gmail|google)\.com/i.test(t.from)],
  ['yahoo', (t) => /yahoo/i.test(t.from) || /yahoo! mail|yahoo\.com/i.test(t.header('x-mailer') ?? '')],
  [
    'outlook',
    (t) =>
      /@(hotmail|outlook|live|msn)\.com/i.test(t.from) ||
      /x-message-delivery/i.test(t.header('x-message-delivery') ?? ''),
  ],
  [
    'exchange',
    (t) =>
      Boolean(t.header('x-ms-exchange-message-is-ndr')) ||
      /internet mail service|microsoft exchange/i.test(t.header('x-mailer') ?? '') ||
      /MSEXCH:/.test(t.text),
  ],
  [
    'notes',
    (t) =>
      /lotus|domino/i.test(t.header('x-mailer') ?? '') ||
      Boolean(t.header('x-notes-item')) ||
      /-{3,} failure reasons\s*-{3,}/i.test(t.text),
  ],
  ['opensmtpd', (t) => /this is the mailer-daemon, please do not reply/i.test(t.text)],
  ['qmail', (t) => /this is the qmail-send program|qmail/i.test(t.text.slice(0, 2000))],
  [
    'exim',
    (t) =>
      /this message was created automatically by mail delivery software/i.test(t.text) ||
      Boolean(t.header('x-failed-recipients')),
  ],
  ['postfix', (t) => /this is the mail system at host|postfix/i.test(t.text.slice(0, 2000))],
  [
    'sendmail',
    (t) =>
      /----- the following addresses had (permanent fatal errors|delivery problems)|----- transcript of session follows/i.test(
        t.text,
      ),
  ],
  ['kddi', (t) => /@.*(ezweb\.ne\.jp|au\.com|dion\.ne\.jp|auone-net\.jp)/i.test(t.from)],
  ['docomo', (t) => /docomo\.ne\.jp/i.test(t.from)],
  ['biglobe', (t) => /biglobe\.ne\.jp/i.test(t.from)],
  ['verizon', (t) => /vtext\.com|vzwpix\.com/i.test(t.from)],
  ['amazonses', (t) => /amazonses\.com|amazonaws\.com/i.test(t.from)],
];

/** The family of the MTA or provider that wrote the notice, or null. */
export function noticeFamily(t: FamilyTraits): string | null {
  for (const [family, test] of NOTICE_FAMILIES) if (test(t)) return family;
  return null;
}

/** The providers whose servers' replies have their own codes, told from the reply or the remote host. */
const REMOTE_FAMILIES: Array<[string, RegExp]> = [
  [
    'google',
    /\bgsmtp\b|google\.com|googlemail\.com|gmail(-smtp-in)?\.|aspmx\.l\.google|support\.google\.com/i,
  ],
  [
    'microsoft',
    /outlook\.com|protection\.outlook|hotmail\.com|live\.com|msn\.com|microsoft\.com|sender\.office\.com|postmaster\.live|\bAS\(\d+\)/i,
  ],
  [
    'yahoo',
    /yahoo(dns|inc)?\.(com|net|co\.jp)|verizonmedia\.com|yahooinc\.com|\[TS\d\d\]|\bTSS\d\d\b|yahoo-help/i,
  ],
  ['aol', /\baol\.com|aol\.mail/i],
  ['godaddy', /secureserver\.net|x\.co\/(sr|rl)bounce|\bIB\d{3}\b/i],
  ['tencent', /qq\.com|tencent/i],
  ['apple', /icloud\.com|\bme\.com|apple\.com|mac\.com/i],
  ['cox', /cox\.net|cox\.com/i],
  ['spectrum', /charter\.net|spectrum\.net|rr\.com|twc\.com/i],
  ['franceptt', /orange\.fr|wanadoo\.fr|laposte\.net|\b(OFR|LPN)\d{3}_\d{3}\b|\bofr_\d+/i],
  ['kddi', /ezweb\.ne\.jp|au\.com|kddi/i],
  ['docomo', /docomo\.ne\.jp/i],
  ['softbank', /softbank\.ne\.jp|i\.softbank\.jp/i],
  ['mimecast', /mimecast/i],
  ['messagelabs', /messagelabs/i],
  ['iua', /\bi\.ua\b/i],
  ['facebook', /facebook\.com/i],
  ['zoho', /zoho/i],
  ['mailru', /mail\.ru/i],
  ['gmx', /gmx\.(net|com|de)|web\.de|1und1|\bmail\.com\b/i],
];

/** The provider whose server refused, told from its reply or host name (`remote`), or null. */
export function remoteFamily(remote: string): string | null {
  for (const [family, re] of REMOTE_FAMILIES) if (re.test(remote)) return family;
  return null;
}
