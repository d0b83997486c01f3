/**
 * The reason of a bounce, from what the report says about a recipient: the enhanced status code, the SMTP
 * reply code, the remote server's words, the SMTP command it refused, and the MTA family that wrote the
 * notice. Same approach as Sisimai (the classifier the field uses as its reference): reasons are tried in a
 * fixed order, each matching when a specific status code names it or the server's words say it; a generic
 * code (5.0.0, 5.7.1) decides only when the words say nothing better.
 */
import {
  BOUNCE_REASONS,
  type BounceEffect,
  type BounceReason,
  bounceEffect,
  type ReasonGroup,
  reasonGroup,
} from './bounce-reasons.js';
import type { BounceRecipient, InboundReport, SmtpCommand } from './inbound-report.js';
import { replyCodeIn } from './notice-text.js';
import { NO_SUCH_USER_WORDS, REASON_PATTERNS } from './reason-patterns.js';
import { statusCodeIn } from './report-fields.js';
import { statusReason } from './status-reasons.js';

/** What a reason is classified from; every field is optional. */
export interface ReasonInput {
  /** RFC 3463 enhanced status code (`5.1.1`). */
  status?: string | null;
  /** SMTP reply code (`550`); read from the diagnostic when not given. */
  replyCode?: string | null;
  /** The remote server's reply or the report's diagnostic. */
  diagnostic?: string | null;
  /** More words of the notice about the recipient, read when the diagnostic says too little. */
  notice?: string | null;
  /** RFC 3464 `Action` (`failed`, `delayed`, `delivered`...). */
  action?: string | null;
  /** The SMTP command the remote server refused. */
  command?: SmtpCommand | null;
  /** The MTA or provider family that wrote the notice (`postfix`, `gmail`, `kddi`...). */
  family?: string | null;
  /** The remote host that refused (`Remote-MTA`). */
  remoteMta?: string | null;
}

/** A classified bounce. */
export interface ReasonVerdict {
  reason: BounceReason;
  group: ReasonGroup;
  /** What the bounce does to the recipient (the table of `bounce-reasons.ts`). */
  effect: BounceEffect;
  /** False for a delay notice or a temporary (4.x.x, 4xx) failure: the address may still take mail. */
  final: boolean;
}

/**
 * The order reasons are tried in: specific causes before general ones, so that a specific cause
 * quoted under a generic code (GoDaddy's "too many recipients this hour" under 5.1.1, a DMARC refusal
 * under 5.7.1) wins over the code.
 */
const ORDER: BounceReason[] = [
  'mailboxfull',
  'exceedlimit',
  'mesgtoobig',
  'suspend',
  'hasmoved',
  'authfailure',
  'requireptr',
  'badreputation',
  'speeding',
  'norelaying',
  'notcompliantrfc',
  'rejected',
  'filtered',
  'userunknown',
  'hostunknown',
  'notaccept',
  'virusdetected',
  'spamdetected',
  'toomanyconn',
  'blocked',
  'policyviolation',
  'contenterror',
  'failedstarttls',
  'securityerror',
  'syntaxerror',
  'systemfull',
  'mailererror',
  'systemerror',
  'networkerror',
  'expired',
  'suppressed',
  'onhold',
];

/** The reason of one bounced recipient, its group and effect. */
export function classifyReason(input: ReasonInput): ReasonVerdict {
  const reason = reasonOf(input);
  const final = isFinal(input);
  return { reason, group: reasonGroup(reason, { final }), effect: bounceEffect(reason, { final }), final };
}

/** The verdict for one recipient of a parsed bounce report (`mta`: the report's family). */
export function classifyRecipient(r: BounceRecipient, mta?: string | null): ReasonVerdict {
  return classifyReason({
    status: r.status,
    replyCode: r.replyCode,
    diagnostic: r.diagnostic,
    notice: r.notice,
    action: r.action,
    command: r.command,
    family: mta,
    remoteMta: r.remoteMta,
  });
}

/**
 * One verdict per recipient of a bounce report; an auto-reply is `vacation` and a complaint `feedback`
 * (neither a bounce); an unrecognised message has none.
 */
export function classifyReport(report: InboundReport): ReasonVerdict[] {
  switch (report.type) {
    case 'bounce':
      return report.recipients.map((r) => classifyRecipient(r, report.mta));
    case 'auto-reply':
      return [notABounce('vacation')];
    case 'complaint':
      return [notABounce('feedback')];
    default:
      return [];
  }
}

function notABounce(reason: 'vacation' | 'feedback'): ReasonVerdict {
  return { reason, group: 'not-a-bounce', effect: bounceEffect(reason), final: true };
}

function reasonOf(input: ReasonInput): BounceReason {
  const action = input.action?.toLowerCase() ?? '';
  if (action === 'delivered' || action === 'relayed' || action === 'expanded') return 'delivered';
  const diagnostic = input.diagnostic ?? '';
  const notice = input.notice ?? '';
  const command = input.command ?? null;
  // The remote server's own code is more precise than a reporting MTA's summary (5.0.0); where both
  // are precise and disagree, neither decides: the words do.
  const quoted = statusCodeIn(diagnostic);
  const summary = !input.status || /^[45]\.0\.0$/.test(input.status);
  let byStatus = statusReason(summary && quoted ? quoted : input.status);
  if (byStatus?.reason === 'delivered') return 'delivered';
  if (!summary && byStatus?.specific && quoted && quoted !== input.status) {
    byStatus = { ...byStatus, specific: false };
  }
  // A local delivery program failed (Postfix and sendmail say "X-Unix; ...").
  if (/^\s*x-unix\s*;/i.test(diagnostic)) return 'mailererror';

  const docomo = /docomo\.ne\.jp/i.test(`${input.remoteMta ?? ''} ${diagnostic}`);
  const familyReason = FAMILY_RULES[input.family ?? '']?.(input);
  if (familyReason) return familyReason;
  const context: Context = { byStatus, command, docomo };
  const specific = byStatus?.specific ? byStatus.reason : undefined;
  // The server's words first, then the notice's; a specific code earlier in the order than what the
  // words say wins; a generic code decides only when no words do.
  let found = saidIn(diagnostic, context) ?? (notice ? saidIn(notice, context) : undefined);
  // A code that says "no such user" loses to words naming a sender-side cause (GoDaddy answers 5.1.x
  // for a blocklisted IP or a rate limit).
  const senderWords = found !== undefined && BOUNCE_REASONS[found].group === 'sender-side';
  if (
    specific &&
    (!found || (rank(specific) < rank(found) && !(specific === 'userunknown' && senderWords)))
  ) {
    found = specific;
  }
  found ??= byStatus?.reason;
  if (found && RECIPIENT_REASONS.has(found)) {
    // A refusal at MAIL FROM is about the sender, one at the greeting about the sending host, whatever
    // words they use ("no such domain", "invalid domain name").
    if (command === 'MAIL') return 'rejected';
    if (command === 'HELO' || command === 'CONN') return 'blocked';
  }
  if (found) return found;
  if (action === 'delayed') return 'expired';
  if (command === 'MAIL') return 'rejected';
  if (command === 'HELO' || command === 'CONN') return 'blocked';
  const reply = input.replyCode ?? replyCodeIn(diagnostic);
  if (reply || diagnostic || notice) return 'onhold';
  return 'undefined';
}

interface Context {
  byStatus: ReturnType<typeof statusReason>;
  command: SmtpCommand | null;
  /** The refusing server is NTT docomo's. */
  docomo: boolean;
}

const rank = (reason: BounceReason) => ORDER.indexOf(reason);

/**
 * The first reason of {@link ORDER} that `words` say. Words saying "user unknown" name the recipient only
 * when the server said it at RCPT (or the code says so): see {@link unknownUser}.
 */
function saidIn(words: string, context: Context): BounceReason | undefined {
  for (const reason of ORDER) {
    if (!(REASON_PATTERNS[reason]?.test(words) ?? false)) continue;
    return reason === 'userunknown' ? unknownUser(words, context) : reason;
  }
  return undefined;
}

/** Reasons that name the recipient (refused at MAIL FROM, they name the sender). */
const RECIPIENT_REASONS = new Set<BounceReason>([
  'userunknown',
  'hostunknown',
  'hasmoved',
  'notaccept',
  'filtered',
]);

/** Words that name a missing mailbox whatever the command (providers that refuse after DATA). */
const ALWAYS_UNKNOWN =
  /doesn't have an? \S+ account|recipient address rejected|invalid recipient|adresse destinataire invalide|recipnotfound|not listed in/i;

/**
 * "User unknown" without a code that says so: the recipient, when said at RCPT or with no word of the
 * stage; a filter's refusal of this sender when said after DATA (the message was read first) or under a
 * mailbox-status code (5.2.x). Under a security or policy code (5.7.x) not said at RCPT, only words saying
 * outright that the mailbox does not exist ({@link NO_SUCH_USER_WORDS}) name the recipient; "mailbox
 * unavailable" or "recipient rejected" there is a refusal of the message. The Japanese carriers word their
 * subscribers' filters so: au (KDDI) answers "550 : User unknown", naming no address; docomo "Unknown
 * user" (after DATA, for the sender's domain).
 */
function unknownUser(words: string, { byStatus, command, docomo }: Context): BounceReason {
  if (/\b5\d\d[\s:]*:\s*user unknown/i.test(words)) return 'filtered';
  if (command === 'RCPT' || byStatus?.reason === 'userunknown' || ALWAYS_UNKNOWN.test(words)) {
    return 'userunknown';
  }
  if (byStatus?.reason === 'filtered' || byStatus?.reason === 'suspend') return 'filtered';
  if (docomo && command === 'DATA') return 'rejected';
  if (command === 'DATA' || docomo) return 'filtered';
  if (byStatus && BOUNCE_REASONS[byStatus.reason].group === 'sender-side') {
    return NO_SUCH_USER_WORDS.test(words) ? 'userunknown' : 'filtered';
  }
  return 'userunknown';
}

/** What a family's notices mean beyond their words. */
const FAMILY_RULES: Record<string, (input: ReasonInput) => BounceReason | undefined> = {
  // Google Groups refuses posts from non-members and to groups that do not exist, in the poster's
  // language and with no code: either way the sender may not post there.
  googlegroups: (input) => (input.status ? undefined : 'rejected'),
};

/** Whether the failure is final: not a delay notice, not a temporary status or reply. */
function isFinal(input: ReasonInput): boolean {
  const action = input.action?.toLowerCase() ?? '';
  if (action === 'delayed') return false;
  if (input.status) return !input.status.startsWith('4.');
  const reply = input.replyCode ?? replyCodeIn(input.diagnostic ?? '');
  return reply ? !reply.startsWith('4') : true;
}
