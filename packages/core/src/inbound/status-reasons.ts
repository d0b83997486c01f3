/**
 * What an enhanced status code (RFC 3463, the IANA registry of RFC 5248, and the provider codes under it)
 * says about the reason of a failure. A code is either specific (X.1.1: the mailbox does not exist) or
 * generic (X.0.0, X.7.1: "refused", for a hundred causes): the classifier lets a specific code decide and
 * uses a generic one only when the words of the reply say nothing better.
 */
import type { BounceReason } from './bounce-reasons.js';

/** Specific codes, by subject and detail (`1.1` is X.1.1): what the code itself names. */
const SPECIFIC: Record<string, BounceReason> = {
  '1.1': 'userunknown', // bad destination mailbox address
  '1.2': 'hostunknown', // bad destination system address
  '1.6': 'hasmoved', // mailbox has moved, no forwarding address
  '1.7': 'rejected', // bad sender's mailbox address syntax
  '1.8': 'rejected', // bad sender's system address
  '1.10': 'notaccept', // recipient address has a null MX (RFC 7505)
  '2.2': 'mailboxfull', // mailbox full
  '2.3': 'exceedlimit', // message length exceeds an administrative limit
  '3.1': 'systemfull', // mail system full
  '3.4': 'mesgtoobig', // message too big for system
  '4.3': 'systemerror', // directory server failure
  '4.6': 'networkerror', // routing loop detected
  '4.7': 'expired', // delivery time expired
  '5.3': 'toomanyconn', // too many recipients
  '7.13': 'suspend', // user account disabled (RFC 3463 update, RFC 5248)
  '7.17': 'hasmoved', // mailbox owner has changed (RFC 7293)
  '7.18': 'hasmoved', // domain owner has changed
  '7.20': 'authfailure', // no passing DKIM signature
  '7.21': 'authfailure', // no acceptable DKIM signature
  '7.22': 'authfailure', // no valid author-matched DKIM signature
  '7.23': 'authfailure', // SPF validation failed
  '7.24': 'authfailure', // SPF validation error
  '7.25': 'requireptr', // reverse DNS validation failed
  '7.26': 'authfailure', // multiple authentication checks failed
  '7.28': 'speeding', // mail flood detected
  '7.29': 'authfailure', // ARC validation failure
  '7.30': 'failedstarttls', // REQUIRETLS support required
};

/** Generic codes: what the code suggests when nothing else is known. */
const GENERIC: Record<string, BounceReason> = {
  '1.0': 'userunknown', // other address status
  '1.3': 'userunknown', // bad destination mailbox address syntax
  '1.4': 'userunknown', // destination mailbox address ambiguous
  '1.9': 'systemerror', // message relayed to a non-compliant mailer
  '2.0': 'filtered', // other or undefined mailbox status
  '2.1': 'suspend', // mailbox disabled, not accepting messages
  '2.4': 'systemerror', // mailing list expansion problem
  '3.0': 'systemerror', // other or undefined mail system status
  '3.2': 'notaccept', // system not accepting network messages
  '3.3': 'systemerror', // system not capable of selected features
  '3.5': 'systemerror', // system incorrectly configured
  '4.0': 'networkerror', // other or undefined network or routing status
  '4.1': 'expired', // no answer from host
  '4.2': 'networkerror', // bad connection
  '4.4': 'hostunknown', // unable to route
  '4.5': 'systemfull', // mail system congestion
  '4.8': 'networkerror', // retry on IPv4
  '5.1': 'syntaxerror', // invalid command
  '5.2': 'syntaxerror', // syntax error
  '5.4': 'syntaxerror', // invalid command arguments
  '5.5': 'systemerror', // wrong protocol version
  '5.6': 'syntaxerror', // authentication exchange line too long
  '7.0': 'securityerror', // other or undefined security status
  '7.1': 'securityerror', // delivery not authorised, message refused
  '7.2': 'securityerror', // mailing list expansion prohibited
  '7.8': 'securityerror', // authentication credentials invalid
  '7.9': 'securityerror', // authentication mechanism too weak
  '7.10': 'failedstarttls', // encryption needed
  '7.11': 'failedstarttls', // encryption required for the authentication mechanism
  '7.14': 'securityerror', // trust relationship required
  '7.15': 'securityerror', // priority level is too low
  '7.16': 'mesgtoobig', // message too big for the specified priority
  '7.27': 'rejected', // sender address has a null MX (some MTAs use it for the recipient's)
};

/** The reason a status code names, and whether the code is specific enough to decide alone. */
export function statusReason(
  status: string | null | undefined,
): { reason: BounceReason; specific: boolean } | null {
  if (!status) return null;
  const m = /^([245])\.(\d{1,3})\.(\d{1,3})$/.exec(status);
  if (!m) return null;
  const [, klass, subject, detail] = m as unknown as [string, string, string, string];
  if (klass === '2') return { reason: 'delivered', specific: true };
  const key = `${subject}.${detail}`;
  const temporary = klass === '4';
  // On a temporary code, "unable to route" is a DNS failure, not a domain that does not exist.
  if (key === '4.4' && temporary) return { reason: 'networkerror', specific: false };
  const specific = SPECIFIC[key];
  if (specific) return { reason: specific, specific: true };
  const microsoft = microsoftCode(Number(subject), Number(detail));
  if (microsoft) return microsoft;
  const generic = GENERIC[key];
  if (generic) return { reason: generic, specific: false };
  // Codes outside the registry (5.0.xxx, 4.x.9xx...): their subject says little; the words decide.
  if (subject === '1') return { reason: 'userunknown', specific: false };
  if (subject === '6') return { reason: 'contenterror', specific: false };
  if (subject === '7') return { reason: 'securityerror', specific: false };
  return null;
}

/**
 * Exchange Online's own details under 5.4 and 5.7 (documented in its NDR reference): 5.7.5xx and
 * 5.7.6xx refuse the sending IP or domain, 5.7.509 is DMARC, 4.7.650 a rate limit by IP reputation,
 * 5.4.3xx DNS and routing failures and expiry; 5.4.310 says the recipient's domain does not exist.
 */
function microsoftCode(subject: number, detail: number): { reason: BounceReason; specific: boolean } | null {
  if (subject === 7 && detail === 509) return { reason: 'authfailure', specific: true };
  if (subject === 7 && detail >= 500 && detail <= 699 && detail !== 510) {
    return { reason: detail >= 650 && detail <= 652 ? 'badreputation' : 'blocked', specific: true };
  }
  if (subject === 4 && (detail === 300 || detail === 316)) return { reason: 'expired', specific: true };
  if (subject === 4 && detail === 310) return { reason: 'hostunknown', specific: true };
  if (subject === 4 && detail >= 311 && detail <= 312) return { reason: 'networkerror', specific: true };
  return null;
}
