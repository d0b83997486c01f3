/**
 * An Amazon SES notification that arrived as mail (an SNS topic with an email subscription): the JSON of a
 * bounce, complaint or delivery notification as the message's text. Read with the same rules as the
 * notifications SES posts over HTTP; like any inbound mail, it applies only through a valid
 * return-path token.
 */
import type { BounceRecipient, InboundReport } from './inbound-report.js';
import { replyCodeIn } from './notice-text.js';
import { cleanAddress, messageIdField, oneLine, statusCodeIn } from './report-fields.js';

interface SesRecipient {
  emailAddress?: string;
  status?: string;
  diagnosticCode?: string;
}

interface SesPayload {
  notificationType?: string;
  eventType?: string;
  mail?: { commonHeaders?: { messageId?: string }; headers?: Array<{ name?: string; value?: string }> };
  bounce?: { bounceType?: string; bouncedRecipients?: SesRecipient[] };
  complaint?: { complainedRecipients?: SesRecipient[]; complaintFeedbackType?: string };
  delivery?: { recipients?: string[]; smtpResponse?: string };
}

/** The report of an SES notification mailed as text, or undefined when `text` holds none. */
export function readSesMail(text: string): InboundReport | undefined {
  const start = text.search(/\{\s*"(notificationType|eventType|Type)"\s*:/);
  if (start < 0) return undefined;
  let p: SesPayload & { Type?: string; Message?: unknown };
  try {
    // Mail transports fold lines longer than 990 characters as "!" + CRLF + space.
    p = JSON.parse(jsonObjectAt(text.slice(start).replace(/!\r?\n /g, ''), 0));
    // The SNS envelope (the raw message delivery setting off) carries the notification as a string.
    if (p?.Type === 'Notification' && typeof p.Message === 'string') p = JSON.parse(p.Message);
  } catch {
    return undefined;
  }
  if (typeof p !== 'object' || p === null) return undefined;
  const type = p.notificationType ?? p.eventType;
  const messageId = messageIdField(
    p.mail?.commonHeaders?.messageId ??
      p.mail?.headers?.find((h) => h.name?.toLowerCase() === 'message-id')?.value,
  );
  if (type === 'Complaint') {
    return {
      type: 'complaint',
      feedbackType: p.complaint?.complaintFeedbackType ?? 'abuse',
      address: cleanOrNull(p.complaint?.complainedRecipients?.[0]?.emailAddress),
      originalMessageId: messageId,
      originalMailFrom: null,
    };
  }
  const recipients: BounceRecipient[] = [];
  if (type === 'Bounce') {
    // Permanent is a hard bounce; Transient and Undetermined are soft (as over HTTP).
    const hard = p.bounce?.bounceType === 'Permanent';
    for (const r of p.bounce?.bouncedRecipients ?? []) {
      const diagnostic = r.diagnosticCode ?? '';
      recipients.push({
        address: cleanOrNull(r.emailAddress),
        originalAddress: null,
        action: 'failed',
        status: statusCodeIn(r.status ?? '') ?? statusCodeIn(diagnostic),
        diagnostic: oneLine(diagnostic || null),
        class: hard ? 'hard' : 'soft',
        replyCode: replyCodeIn(diagnostic.replace(/^\s*[a-z-]+\s*;/i, ' ')),
      });
    }
  } else if (type === 'Delivery') {
    const response = p.delivery?.smtpResponse ?? '';
    for (const address of p.delivery?.recipients ?? []) {
      recipients.push({
        address: cleanOrNull(address),
        originalAddress: null,
        action: 'delivered',
        status: statusCodeIn(response),
        diagnostic: oneLine(response || null),
        class: 'delivered',
        replyCode: replyCodeIn(response),
      });
    }
  }
  if (recipients.length === 0) return undefined;
  return {
    type: 'bounce',
    format: 'text-bounce',
    recipients,
    originalMessageId: messageId,
    mta: 'amazonses',
  };
}

function cleanOrNull(value: string | undefined): string | null {
  return value ? cleanAddress(value) : null;
}

/** The JSON object that starts at `start` (up to its matching brace), or the rest of `text`. */
function jsonObjectAt(text: string, start: number): string {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return text.slice(start);
}
