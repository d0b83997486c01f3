/**
 * Refusals by the recipient's own settings or by the receiving site's sender checks: the address exists
 * (or nothing says it does not), the message or its sender was refused.
 *
 * Sources: Sisimai's `filtered` and `rejected` phrase lists (lib/sisimai/reason/filtered.rb and
 * rejected.rb in rb-sisimai, reason/why-filtered.go and why-rejected.go in go-sisimai; BSD 2-Clause,
 * Copyright (C) azumakuniyuki; the phrases only), and the replies documented for AOL, Facebook, Exchange
 * (`RESOLVER.RST.NotAuthorized`), Exim (`sender verify failed`), qmail, McAfee, MessageLabs and SonicWall.
 * Left out on purpose: Sisimai's `filtered` for "user not found" (Mail.Ru) and "not found recipient
 * account", which Mailroom reads as a missing mailbox (docs/design-notes.md, "Bounce reading: where we
 * differ from Sisimai").
 */
import type { PhraseFamily } from './phrase-table.js';

/** The recipient's settings or filter refused this sender or message (reason `filtered`, soft). */
export const RECIPIENT_FILTER: PhraseFamily = {
  phrases: [
    // From Sisimai's list
    'because the recipient is only accepting mail from specific email addresses',
    'due to extended inactivity new mail is not currently being accepted for this mailbox',
    'has restricted sms e-mail',
    'is not accepting any mail',
    'message filtered',
    'message rejected due to user rules',
    'refused due to recipient preferences',
    'resolver.rst.notauthorized',
    'this account is protected by',
    'user refuses to receive this mail',
    'user reject',
    'we failed to deliver mail because the following address recipient id refuse to receive mail',
    'you have been blocked by the recipient',
    // From documentation
    'filtered by',
    'domain filter',
    'rejected-by-the-domain-filter',
    '受信拒否',
  ],
  patterns: [/rejected (by|due to) (the )?recipient'?s? (preferences|filter|settings)/],
};

/** The envelope sender or the sender's domain was refused (reason `rejected`, sender-side). */
export const SENDER_REFUSED: PhraseFamily = {
  phrases: [
    // From Sisimai's list
    'access denied (in reply to mail from command)',
    'access denied (sender blacklisted)',
    'administrative prohibition',
    'batv failed to verify',
    'batv validation failure',
    'backscatter protection detected an invalid or expired email address',
    "because the sender isn't on the recipient's list of senders to accept mail from",
    'bogus mail from',
    "can't determine purported responsible address",
    'connections not accepted from servers without a valid sender domain',
    'denied [bouncedeny]',
    'denied by secumail valid-address-filter',
    'email address is on senderfilterconfig list',
    'emetteur invalide',
    'empty envelope senders not allowed',
    'envelope blocked - ',
    'error: no third-party dsns',
    'from: domain is invalid. please provide a valid from:',
    'fully qualified email address required',
    'invalid domain, see <url:',
    'invalid sender',
    'is not a registered gateway user',
    'mail from not owned by user',
    'message rejected: email address is not verified',
    'null sender is not allowed',
    'recipient addresses rejected : access denied',
    'returned mail not accepted here',
    'rfc 1035 violation: recursive cname records for',
    'rule imposed mailbox access for',
    'sending this from a different address or alias using the ',
    'sender address has been blacklisted',
    'sender email address rejected',
    'sender is in my black list',
    'sender is spammer',
    'sender not pre-approved',
    'sender rejected',
    'sender domain is empty',
    'sender verify failed',
    'sender was rejected',
    'syntax error: empty email address',
    'the message has been rejected by batv defense',
    'this server does not accept mail from',
    'transaction failed unsigned dsn for',
    'unroutable sender address',
    'you are not allowed to post to this mailing list',
    'you are sending to/from an address that has been blacklisted',
    'your access to submit messages to this e-mail system has been rejected',
    'your email address has been blacklisted',
    // From documentation
    'sender verification failed',
    'unroutable sender',
    'purported responsible address',
    'you are not a member',
    "don't have permission to post",
    'may not exist, or you may not have permission',
  ],
  patterns: [
    /sender (address )?(rejected|refused|denied|not allowed|blocked|unknown|invalid)|(envelope|return path|mail from) (address )?(rejected|refused|invalid)/,
    /domain of sender address .{0,80}does not exist|sender domain (does not exist|must exist|not found|is invalid)/,
    /(invalid|bad|unknown) sender|from: domain is invalid/,
    /not (allowed|permitted) to (send|post)/,
  ],
};
