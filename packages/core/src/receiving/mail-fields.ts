import type { InboundMail } from './receiving-types.js';

/**
 * What a MIME parser reads of a received message, before it is judged and its reply text stripped: the
 * same fields whichever parser read it (postal-mime's fast path or mailparser).
 */
export interface MailFields
  extends Pick<
    InboundMail,
    | 'from'
    | 'to'
    | 'cc'
    | 'reply_to'
    | 'subject'
    | 'date'
    | 'message_id'
    | 'in_reply_to'
    | 'references'
    | 'text'
    | 'html'
    | 'headers'
    | 'attachments'
  > {
  /**
   * Whether the message answers another (an In-Reply-To or References header with a value), one of the
   * reasons its text goes through the reply parser.
   */
  answers: boolean;
}
