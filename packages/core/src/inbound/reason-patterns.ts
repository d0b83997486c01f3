/**
 * The words by which remote servers say why they refused, per reason: the replies of the common MTAs
 * (Postfix, Exim, sendmail, qmail, Exchange, Notes, Courier...) and providers (Gmail, Microsoft, Yahoo,
 * Apple, GoDaddy, Tencent, Orange, the Japanese carriers), in English and the other languages they use.
 * Matched case-insensitively against one line of text; the classifier decides in which order.
 */
import type { BounceReason } from './bounce-reasons.js';

const p = (...parts: RegExp[]) => new RegExp(parts.map((r) => r.source).join('|'), 'i');

/** The patterns of each reason that words can tell (not `delivered`, `feedback`, `undefined`). */
export const REASON_PATTERNS: Partial<Record<BounceReason, RegExp>> = {
  mailboxfull: p(
    /mailbox (is |was )?(full|over ?quota|exceeded|has exceeded|size limit exceeded)/,
    /(mail ?box|inbox|account|user|recipient)('s)? (is )?(over|exceeded|exceeds) (the )?(storage |disk )?(quota|storage|size|limit)/,
    /over ?quota|quota (exceeded|full|violation)|exceeded (the )?(storage )?quota|disk quota/,
    /(inbox|mailbox) is out of storage|insufficient (storage|space) (in|for) (the )?(mail ?box|inbox)|out of storage space/,
    /user mailbox exceeds allowed size|mailbox size limit|mailfolder is full|mailbox full/,
    /number of messages in recipient's mailbox exceeded|too many messages in (this|the) mailbox/,
    /their mailbox is full|recipient'?s? mailbox is full|boite (aux lettres )?pleine/,
    /メールボックスが(一杯|いっぱい|満杯)|容量(を)?(超過|オーバー)/,
  ),
  exceedlimit: p(
    /message (size |length )?exceeds? (the )?limit set by (the )?recipient/,
    /too large for this recipient|recipsizelimit|exceeds (the )?(recipient|mailbox)('s)? (size )?limit/,
  ),
  mesgtoobig: p(
    /message (is )?too (big|large)|message (size|length) (exceeds|is larger than|too)|size (limit )?exceeded/,
    /exceeds (the )?(fixed )?maximum (allowed )?message size|message size exceeds|mail too large/,
    /line limit exceeded|line too long|message file too big|exceeded the maximum size/,
  ),
  suspend: p(
    /(account|mailbox|address|user) (has been |is |was )?(disabled|suspended|inactive|deactivated|frozen|locked|blocked|discontinued)/,
    /disabled (recipient|mailbox|account|user)|suspended (recipient|mailbox|account)|inactive (mailbox|account|user)/,
    /mailbox (is )?(frozen|inactive|disabled)|temporar(il)?y locked|account is not active|recipient account is blocked/,
    /user account disabled|the email account that you tried to reach is (disabled|inactive)|account has been disabled or discontinued/,
    /le compte du destinataire est bloque|the user\(s\) account is disabled/,
  ),
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
  userunknown: p(
    /user (is )?unknown|unknown (user|recipient|mailbox|local ?part)|no such (user|mailbox|recipient|address|account|local user)/,
    /(mailbox|user|recipient|address|account) (does not|doesn't|did not) exist|(user|recipient) not (found|exist|listed)/,
    /invalid (recipient|mailbox|user|address|final delivery userid)|recipient (is )?(invalid|unknown|rejected)/,
    /no mailbox here|not a valid (mailbox|recipient|user)|(mailbox|user) not found|recipnotfound|recipient name is not recognized/,
    /address (is )?(unknown|invalid|not found)|address rejected\.$|bad destination mailbox|unrouteable address|address not found/,
    /the email account that you tried to reach does not exist|doesn't have an? .{1,40} account|this user doesn't have/,
    /mailbox (not found|unavailable|does not exist)|user not listed|not listed in .{0,30}(directory|address book)/,
    /no one with that email address here|addressee unknown|the recipient (address )?does not exist|requested action not taken: no such user/,
    /destination (address|user) (does not exist|unknown)|undeliverable address|unknown or illegal alias/,
    /recipient address rejected: access denied|no valid recipients|invalid recipient|adresse destinataire invalide/,
    /please check if (the )?(e-?mail )?address is correct|\(and other recipients in the same domain\)/,
    /宛先.{0,10}(見つかりません|存在しません)|存在しない(ユーザ|アドレス)/,
  ),
  filtered: p(
    /message filtered|filtered by|rejected (by|due to) (the )?recipient'?s? (preferences|filter|settings)/,
    /refused due to recipient preferences|domain filter|rejected-by-the-domain-filter|受信拒否/,
  ),
  hostunknown: p(
    /host (or domain name )?(not found(?!, try again)|unknown)|unknown (host|domain)|no such (domain|host)|domain (does not exist|not found|is invalid)/,
    /(couldn't|could not|can't|cannot) find any host|invalid domain|domain name not found|nxdomain/,
    /name service error .{0,60}host not found(?!, try again)|domain is not reachable|unrouteable (domain|mail domain)/,
    /host [a-z0-9.-]+ not found|(?<![@\w.-])[a-z0-9-]+(\.[a-z0-9-]+)+\.? does not exist|the account or domain may not exist/,
  ),
  notaccept: p(
    /null mx|does not accept (e-?mail|mail)|doesn't receive email|accepts no mail|not accepting (network )?(mail|messages)/,
    /couldn't find a mail exchanger|no mail exchanger|no (mx|mail) (record|host)s?|mx (record|lookup) (not found|failed)/,
    /no mx found|indicated no smtp service|mx or srv record indicated no/,
  ),
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
  rejected: p(
    /sender (address )?(rejected|refused|denied|not allowed|blocked|unknown|invalid)|(envelope|return path|mail from) (address )?(rejected|refused|invalid)/,
    /domain of sender address .{0,80}does not exist|sender domain (does not exist|must exist|not found|is invalid)/,
    /unroutable sender|(invalid|bad|unknown) sender|purported responsible address|from: domain is invalid|you are not a member/,
    /sending this from a different address or alias|sender verify failed|sender verification failed|not (allowed|permitted) to (send|post)|don't have permission to post|may not exist, or you may not have permission/,
  ),
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
