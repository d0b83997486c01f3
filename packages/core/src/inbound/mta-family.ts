/**
 * Which MTA or provider wrote a bounce notice (`postfix`, `exim`, `gmail`, `googlegroups`, `kddi`...): a
 * hint for the reason classifier, whose reading of some notices depends on who wrote them (Google Groups
 * refuses posters in their own language and without a code), and for whoever shows the report. Read
 * from the notice's headers and words; never trusted for anything but that hint.
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
    (t) => /@(hotmail|outlook|live|msn)\.com/i.test(t.from) || Boolean(t.header('x-message-delivery')),
  ],
  [
    'exchange',
    (t) =>
      Boolean(t.header('x-ms-exchange-message-is-ndr')) ||
      /internet mail service|microsoft exchange/i.test(t.header('x-mailer') ?? '') ||
      /MSEXCH:|diagnostic information for administrators|delivery has failed to these recipients/i.test(
        t.text,
      ),
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
