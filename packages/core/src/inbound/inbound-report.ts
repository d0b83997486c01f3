/**
 * What an inbound message says, once parsed: the core's reading of a DSN, an ARF report, a plain-text
 * bounce or an auto-reply. Produced by `parseInboundMessage`; acted on by the inbound receiver.
 */

/**
 * How a recipient of a bounce report fared, as the parser reads it at first glance (a 5.x.x is `hard`).
 * Effects never follow it: they follow the reason (`classifyRecipient`) and its class in the table of
 * `bounce-reasons.ts`, where a sender-side 5.x.x never suppresses.
 */
export type BounceClass = 'hard' | 'soft' | 'delivered';

/** An SMTP command a remote server may refuse at (`CONN`: the connection or its greeting). */
export type SmtpCommand = 'CONN' | 'HELO' | 'MAIL' | 'RCPT' | 'DATA';

/** One recipient of a bounce report (an RFC 3464 per-recipient block, or what a plain-text notice names). */
export interface BounceRecipient {
  /** `Final-Recipient` (or the address a plain-text notice names), lower-cased domain; null if none. */
  address: string | null;
  /** `Original-Recipient`, when given. */
  originalAddress: string | null;
  /** RFC 3464 `Action` (`failed`, `delayed`, `delivered`, `relayed`, `expanded`); `failed` for text bounces. */
  action: string;
  /** RFC 3463 status (`5.1.1`), when known. */
  status: string | null;
  /** `Diagnostic-Code` or the remote server's words, one line. */
  diagnostic: string | null;
  /** The parser's first reading (see {@link BounceClass}); not what the engine acts on. */
  class: BounceClass;
  /** The remote server's SMTP reply code (`550`), when the report gives one. */
  replyCode?: string | null;
  /** The SMTP command the remote server refused (`RCPT`, `DATA`...), when the report says. */
  command?: SmtpCommand | null;
  /** `Remote-MTA`, or the host the notice says refused. */
  remoteMta?: string | null;
  /**
   * The notice's human-readable words about this recipient, on one line (up to 2,000 characters): read by
   * the reason classifier when the diagnostic says too little. Never stored.
   */
  notice?: string | null;
}

/** A parsed inbound message. */
export type InboundReport =
  | {
      type: 'bounce';
      /** `dsn`: a multipart/report delivery-status; `text-bounce`: recognised from its wording. */
      format: 'dsn' | 'text-bounce';
      recipients: BounceRecipient[];
      /** The bounced message's Message-ID (from the returned message or headers), with brackets. */
      originalMessageId: string | null;
      /** The MTA or provider family that wrote the notice (`postfix`, `gmail`, `kddi`...), when told. */
      mta?: string | null;
    }
  | {
      type: 'complaint';
      /** ARF `Feedback-Type` (`abuse`, `fraud`, ...). */
      feedbackType: string;
      /** ARF `Original-Rcpt-To`, or the returned message's To. */
      address: string | null;
      originalMessageId: string | null;
      /** The returned message's Return-Path or ARF `Original-Mail-From` (may hold a VERP token). */
      originalMailFrom: string | null;
    }
  | {
      /** An out-of-office, vacation notice, challenge-response or other automatic reply: not a bounce. */
      type: 'auto-reply';
      reason: string;
    }
  | {
      /** Nothing Mailroom acts on. */
      type: 'unrecognised';
      reason: string;
    };
