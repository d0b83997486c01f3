/**
 * Why a message came back, and what that changes: the taxonomy of bounce reasons (the names Sisimai uses,
 * which people in this field recognise) and the one table of effects by reason. Bounces read from mail,
 * synchronous SMTP refusals and provider notifications all go through this table, so a reason has the same
 * effect wherever it was learnt.
 */

/**
 * Who or what a reason says is at fault, which decides the effect:
 * - `recipient-hard`: the address itself is bad (it does not exist, its domain does not, it moved, or the
 *   domain takes no mail); suppressed at once.
 * - `soft`: the address exists but could not take this message now (a full mailbox, a suspended account,
 *   a down server, a message that expired in a queue); counted, and suppressed after N in a row.
 * - `sender-side`: the sender (its IP, domain, authentication, rate or message) was refused; the address
 *   is fine and is never suppressed for it. Recorded for the sender's reputation instead.
 * - `not-a-bounce`: a delivery report, an automatic reply or a complaint report: no bounce effect.
 */
export type ReasonGroup = 'recipient-hard' | 'soft' | 'sender-side' | 'not-a-bounce';

/**
 * What a bounce with a given reason does to the recipient:
 * - `suppress`: the address is suppressed now (a hard bounce).
 * - `count-soft`: one more soft bounce in a row (the address is suppressed after the limit).
 * - `record-sender-side`: recorded against the sender; the recipient is unchanged.
 * - `none`: nothing changes.
 */
export type BounceEffect = 'suppress' | 'count-soft' | 'record-sender-side' | 'none';

/** One reason of the taxonomy. */
export interface ReasonInfo {
  readonly group: ReasonGroup;
  /** What the reason means, for docs and the dashboard. */
  readonly description: string;
}

/**
 * The reasons, by Sisimai's names (its v4 names and the ones v5 added: `badreputation`, `failedstarttls`,
 * `filtered`, `mailererror`, `notcompliantrfc`, `requireptr`, `suppressed`), each with its group.
 */
export const BOUNCE_REASONS = {
  userunknown: { group: 'recipient-hard', description: 'The mailbox does not exist at the domain.' },
  hostunknown: { group: 'recipient-hard', description: 'The domain does not exist or has no mail host.' },
  hasmoved: { group: 'recipient-hard', description: 'The mailbox has moved and mail is not forwarded.' },
  notaccept: {
    group: 'recipient-hard',
    description: 'The domain accepts no mail at all (a null MX, a host that refuses every message).',
  },
  mailboxfull: { group: 'soft', description: "The recipient's mailbox is full or over its quota." },
  exceedlimit: { group: 'soft', description: "The message exceeds a limit of the recipient's mailbox." },
  suspend: { group: 'soft', description: 'The mailbox is disabled or suspended for now.' },
  filtered: {
    group: 'soft',
    description: "The recipient's own settings or filter refused the message (common at Japanese carriers).",
  },
  expired: {
    group: 'soft',
    description: 'The message stayed in a queue past its lifetime (the destination could not be reached).',
  },
  networkerror: { group: 'soft', description: 'DNS, routing or connection failure on the way.' },
  systemerror: { group: 'soft', description: 'The receiving system failed (configuration, loop, crash).' },
  systemfull: { group: 'soft', description: "The receiving server's disk or spool is full." },
  mailererror: { group: 'soft', description: 'The local delivery program at the destination failed.' },
  suppressed: {
    group: 'soft',
    description: "The sending provider did not try: the address is on the provider's suppression list.",
  },
  onhold: { group: 'soft', description: 'A failure whose cause the report does not say enough to tell.' },
  undefined: { group: 'soft', description: 'A failure that could not be classified.' },
  blocked: { group: 'sender-side', description: 'The sending IP address or host is refused (a blocklist).' },
  badreputation: { group: 'sender-side', description: "The sending IP address's reputation is too low." },
  requireptr: {
    group: 'sender-side',
    description: 'The sending IP address has no or a mismatching reverse DNS (PTR) record.',
  },
  spamdetected: { group: 'sender-side', description: 'A spam filter refused the message.' },
  virusdetected: { group: 'sender-side', description: 'A virus scanner refused the message.' },
  contenterror: { group: 'sender-side', description: 'The content or headers of the message were refused.' },
  notcompliantrfc: {
    group: 'sender-side',
    description: 'The message breaks the format RFCs (duplicate headers, bad encodings).',
  },
  mesgtoobig: { group: 'sender-side', description: 'The message is larger than the receiving server takes.' },
  policyviolation: {
    group: 'sender-side',
    description: "The message breaks the receiving site's policy (content, attachments, list rules).",
  },
  authfailure: { group: 'sender-side', description: "SPF, DKIM or DMARC of the sender's domain failed." },
  securityerror: {
    group: 'sender-side',
    description: 'A security requirement was not met (authentication, encryption, a refused sender).',
  },
  failedstarttls: { group: 'sender-side', description: 'TLS was required and could not be negotiated.' },
  speeding: { group: 'sender-side', description: 'The sender went past a rate limit (too many messages).' },
  toomanyconn: {
    group: 'sender-side',
    description: 'The sender opened too many connections or named too many recipients at once.',
  },
  rejected: {
    group: 'sender-side',
    description: "The envelope sender (MAIL FROM) or the sender's domain was refused.",
  },
  norelaying: {
    group: 'sender-side',
    description: 'Relaying was denied: the message went to a host that does not serve that domain.',
  },
  syntaxerror: {
    group: 'sender-side',
    description: "The receiving server refused the sender's SMTP command.",
  },
  delivered: { group: 'not-a-bounce', description: 'A delivery report: the message was delivered.' },
  vacation: { group: 'not-a-bounce', description: 'An automatic reply (out of office, vacation).' },
  feedback: {
    group: 'not-a-bounce',
    description: 'A complaint (feedback) report: handled as a complaint, never as a bounce.',
  },
} as const satisfies Record<string, ReasonInfo>;

/** A reason of the taxonomy. */
export type BounceReason = keyof typeof BOUNCE_REASONS;

/** Every reason, in the order of the table. */
export const REASON_NAMES = Object.keys(BOUNCE_REASONS) as BounceReason[];

/** The effect of each group. */
const EFFECT_OF: Record<ReasonGroup, BounceEffect> = {
  'recipient-hard': 'suppress',
  soft: 'count-soft',
  'sender-side': 'record-sender-side',
  'not-a-bounce': 'none',
};

/** Whether `name` is a reason of the taxonomy. */
export function isBounceReason(name: string): name is BounceReason {
  return Object.hasOwn(BOUNCE_REASONS, name);
}

/**
 * The group of `reason`. `final: false` (a delay notice, or a report whose status is temporary, 4.x.x)
 * makes a recipient-hard reason soft: the address is not known to be bad until a server says so for good.
 */
export function reasonGroup(reason: BounceReason, options: { final?: boolean } = {}): ReasonGroup {
  const group: ReasonGroup = BOUNCE_REASONS[reason].group;
  return group === 'recipient-hard' && options.final === false ? 'soft' : group;
}

/**
 * The effect of a bounce with `reason`: the one rule every bounce source (DSN, text bounce, SMTP reply at
 * send time, provider notification, simulator) applies. A sender-side reason never suppresses.
 */
export function bounceEffect(reason: BounceReason, options: { final?: boolean } = {}): BounceEffect {
  return EFFECT_OF[reasonGroup(reason, options)];
}
