/**
 * The words by which remote servers say why they refused, per reason: the replies of the common MTAs
 * (Postfix, Exim, sendmail, qmail, Exchange, Notes, Courier...) and providers (Gmail, Microsoft, Yahoo,
 * Apple, GoDaddy, Tencent, Orange, the Japanese carriers), in English and the other languages they use.
 * Matched case-insensitively against one line of text; the classifier decides in which order. The large
 * families (unknown users and hosts, full mailboxes, suspended accounts, refusals by the recipient or of the
 * sender) are data tables under `phrases/`, with their sources; every table is compiled once, at load.
 */
import type { BounceReason } from './bounce-reasons.js';
import { MAILBOX_FULL } from './phrases/mailbox-full-phrases.js';
import { compilePhrases } from './phrases/phrase-table.js';
import { RECIPIENT_FILTER, SENDER_REFUSED } from './phrases/refused-by-recipient-phrases.js';
import { ACCOUNT_SUSPENDED } from './phrases/suspended-phrases.js';
import { NO_MAIL_HOST, NO_SUCH_DOMAIN } from './phrases/unknown-host-phrases.js';
import { NO_SUCH_USER, REFUSED_RECIPIENT } from './phrases/unknown-user-phrases.js';

const p = (...parts: RegExp[]) => new RegExp(parts.map((r) => r.source).join('|'), 'i');

/**
 * Words that say outright that the mailbox or user does not exist (not merely "refused" or "unavailable"):
 * they name a missing mailbox under a generic code too (5.0.0, 5.7.1).
 */
export const NO_SUCH_USER_WORDS: RegExp = compilePhrases(NO_SUCH_USER);

/** The patterns of each reason that words can tell (not `delivered`, `feedback`, `undefined`). */
export const REASON_PATTERNS: Partial<Record<BounceReason, RegExp>> = {
  mailboxfull: compilePhrases(MAILBOX_FULL),
  exceedlimit: p(
    /message (size |length )?exceeds? (the )?limit set by (the )?recipient/,
    /too large for this recipient|recipsizelimit|exceeds (the )?(recipient|mailbox)('s)? (size )?limit/,
  ),
  mesgtoobig: p(
    /message (is )?too (big|large)|message (size|length) (exceeds|is larger than|too)|size (limit )?exceeded/,
    /exceeds (the )?(fixed )?maximum (allowed )?message size|message size exceeds|mail too large/,
    /line limit exceeded|line too long|message file too big|exceeded the maximum size/,
  ),
  suspend: compilePhrases(ACCOUNT_SUSPENDED),
  hasmoved: p(
    /no longer (on|at) (this )?server|recipient no longer|has moved|address has changed|not our (user|customer)/,
    /mailbox has moved|moved to a new address|no longer (valid|active|in use)|address no longer accepts mail/,
  ),
  authfailure: p(
    /\bdmarc\b|\bspf\b.{0,40}(fail|check|validat|policy|not (pass|permit|allow))|bad spf record|(fails?|failed) (to pass )?(spf|dkim)/,
    /\bdkim\b.{0,30}(fail|invalid|bad|missing|verif)|unauthenticated (email|mail|message)/,
    /not allowed to send from .{0,80}spf|sender is unauthenticated|must pass either spf or dkim|authenticate with either spf or dkim/,
    /(multiple )?authentication checks failed|does not have authentication information|sender (domain )?authentication fail/,
    /does not pass dmarc|dmarc (policy|verification|check)/,
  ),
  requireptr: p(
    /reverse (dns|lookup|name)|\bptr\b|\brdns\b|no (valid )?(reverse|ptr)|ip name lookup failed/,
    /cannot find your (reverse )?hostname|client host .{0,40}(no|without) (hostname|reverse)|unverif(y|i)able sending ips?/,
    /mismatches client ip|does not resolve to your ip|hostname does not match|servers? (without|with no) (a )?(valid )?(reverse|dns)/,
  ),
  badreputation: p(
    /(low|poor|bad) (ip |sender |sending )?reputation|reputation (of|for) (the )?(sending )?(ip|domain|sender)/,
    /rate limited due to ip reputation|ip reputation|sender reputation|sending ip .{0,40}reputation/,
  ),
  speeding: p(
    /(receiving|sending|send) mail at a rate|at a rate that prevents|rate of (incoming|unsolicited) mail/,
    /too many (messages|emails|recipients) (this|per|in the last|in an?) (hour|day|minute)|sent to too many recipients/,
    // Cox: "too many invalid recipients" (the sender's, never the recipient's fault)
    /too many invalid recipients/,
    /(message|sending|delivery|send) (rate|volume) (limit|exceeded)|exceeded (the )?(sending|message|hourly|daily) (rate|limit|quota)/,
    /unexpected volume|too much mail|mail flood|daily (sending|message|relay) (quota|limit)|rate ?limit(ed)? exceeded/,
  ),
  norelaying: p(
    /relay(ing)? (access )?(denied|not (permitted|allowed))|(not|isn't) (configured|permitted|allowed) to relay/,
    /insecure mail relay|we do not relay|unable to relay|no relaying|relay not permitted|relaying prohibited|not a gateway/,
    /email address is not verified\. the following identities failed/,
  ),
  notcompliantrfc: p(
    /rfc ?5322|rfc ?2822|rfc ?822 (compliant|violation)|not (rfc|rfc-) ?compliant/,
    /multiple (addresses in from|\w+ headers)|duplicate header|messages with multiple .{0,30} are not accepted/,
  ),
  userunknown: compilePhrases(NO_SUCH_USER, REFUSED_RECIPIENT),
  filtered: compilePhrases(RECIPIENT_FILTER),
  hostunknown: compilePhrases(NO_SUCH_DOMAIN),
  notaccept: compilePhrases(NO_MAIL_HOST),
  virusdetected: p(/\bvirus|malware|infected|trojan|worm detected|dangerous attachment/),
  spamdetected: p(
    /spam (detected|message|content|score|filter)|(detected|identified|classified|scored|flagged|marked|considered) as (spam|junk|unsolicited)/,
    /rejected (due to|as|for) (spam|junk)|unsolicited (mail|e-?mail|message|bulk)|spam classification|likely (spam|unsolicited)|looks like spam|\bube\b|- spam\b/,
    /message content rejected|content (filter|rejected)|blacklisted url|mail rejete\. mail rejected|bulk mail|high probability of spam/,
  ),
  toomanyconn: p(
    /too many (connections|concurrent|simultaneous|sessions|recipients)|connection (rate|frequency|limit)/,
    /(ip|connection) frequency limited|too many (smtp )?sessions|exceeded .{0,20}connections|max(imum)? (number of )?connections/,
  ),
  blocked: p(
    /blocked using|blacklist|blocklist|block list|black list|spamhaus|dnsbl|\brbl\b|spamcop|sorbs|barracudacentral/,
    /banned sending ip|access denied, banned|client host .{0,40}(rejected|blocked)|(your|sending|source|client) ip .{0,30}(blocked|listed|rejected|banned)/,
    /ip address (is )?(blocked|blacklisted|listed|not allowed)|blocked for (abuse|spam)|host network not allowed/,
    /not accepting connections|service not available, closing transmission channel|service refused|service refuse\b/,
    /use the smtp server of your isp|open relay|messages from [\d.]+ weren't sent|part of their network is on our block list/,
    /adresse ip source bloquee|may not be mail exchanger|\(bl\)|blocked by|access denied\.\.\./,
    /invalid ip for sending mail/,
  ),
  rejected: compilePhrases(SENDER_REFUSED),
  policyviolation: p(
    /polic(y|ies)( reasons| violation)?|protocol violation|header error|not allowed by|content presents a potential/,
    /message not allowed|prohibited (attachment|content|file)|attachment (type )?(not allowed|rejected|blocked)/,
  ),
  contenterror: p(
    /improper use of 8-bit|8-?bit data|headers? too (large|long)|media error|invalid (mime|message|header)|malformed (message|header|mime)/,
    /content error|bad message (content|header)|message header/,
  ),
  failedstarttls: p(
    /starttls (failed|error|is required|required)|tls (is )?required|requires? (a )?(secure|encrypted|tls) connection/,
    /must issue a starttls|does not support tls|tls negotiation failed|encryption required/,
  ),
  securityerror: p(
    /authentication required|auth(entication)? (is )?required|turn on smtp authentication|unauthenticated senders|not authori[sz]ed|access denied/,
  ),
  syntaxerror: p(
    /syntax error|command (parameter )?not (implemented|recognized)|improper sequence of commands|bad sequence of commands/,
    /unrecognized command|malformed (address|command)|invalid command/,
  ),
  systemfull: p(
    /insufficient (system |disk )?(storage|space)|disk (is )?full|spool (is )?full|file system full/,
  ),
  mailererror: p(
    /procmail|mailer error|x-unix|\bexit (status|code)|command (died|failed)|pipe to |program failed|local delivery failed/,
  ),
  systemerror: p(
    /(internal|local|system|server) (system |server )?(error|failure)|temporary (system|server) (error|failure)|configuration error|server (is )?(busy|misconfigured)/,
    /loop alert|transaction failed|could not load/,
    /service (currently )?unavailable|unable to contact (ldap|directory)|directory (server )?failure/,
    /queue file write error|write error|i\/o error|out of memory/,
  ),
  networkerror: p(
    /mail loop|routing loop|loop(ing)? detected|too many hops|hop count|maximum hop|dns (error|failure|lookup failed)|(host ?name|dns) lookup failure|name service error|malformed or unexpected name server reply|lost connection/,
    /connection (refused|reset|dropped)|network (error|unreachable)|no route to host|unable to (connect|establish)/,
    /wasn't able to establish an smtp connection|could not connect|host (is )?unreachable|dns type .{0,30}lookup/,
  ),
  expired: p(
    /expired|timed? ?out|time ?out|queue(d)? too long|delivery time|retry time|could not be delivered within/,
    /no answer from host|did not accept our requests to connect|not yet been delivered|delayed|aborted after/,
  ),
  suppressed: p(/suppression list|suppressed/),
  onhold: p(/on hold|temporary failure/),
};
