import { domainOf } from '../base/address-parts.js';
import { MailroomError } from '../base/errors.js';
import { replyAddressOf } from '../base/reply-address.js';
import type { DeliveryRecord, DkimConfig, MailingRecord, RenderedContent } from '../store/records.js';
import type { OutgoingAttachment, OutgoingMessage } from '../transport/transport.js';
import { buildInvitation } from './icalendar.js';

/** What the worker computes once per mailing and reuses for every recipient. */
export interface MailingParts {
  attachments: OutgoingAttachment[];
  dkim: (DkimConfig & { domain: string }) | undefined;
  /**
   * The project's reply domain when it turned per-delivery reply addresses on (issue 40): a message
   * without a Reply-To of its own gets `reply+<delivery id>@<replyDomain>`.
   */
  replyDomain?: string;
}

/** Decode a mailing's attachments once (never per recipient). */
export function decodeAttachments(mailing: MailingRecord): OutgoingAttachment[] {
  return mailing.attachments.map((a) => {
    // URL attachments are fetched at accept time; a spec without bytes here would send an empty file.
    if (a.contentBase64 === undefined) {
      throw new MailroomError('UNPROCESSABLE', `Attachment ${a.filename} has no content`);
    }
    return {
      filename: a.filename,
      contentType: a.contentType,
      content: Buffer.from(a.contentBase64, 'base64'),
    };
  });
}

/** The message one delivery sends: the per-mailing parts plus the recipient's rendering. */
export function composeMessage(
  mailing: MailingRecord,
  delivery: DeliveryRecord,
  rendered: RenderedContent,
  parts: MailingParts,
  headers: Record<string, string>,
  now: Date,
): OutgoingMessage {
  const message: OutgoingMessage = {
    messageId: delivery.messageId,
    from: mailing.sender,
    to: { address: delivery.address, name: headerSafe(delivery.name) },
    subject: rendered.subject,
    text: rendered.text,
    attachments: parts.attachments,
    headers,
    mailing: { projectId: mailing.projectId, kind: mailing.kind, ref: mailing.ref },
  };
  if (rendered.html !== null) message.html = rendered.html;
  // The app's own Reply-To wins: it chose where answers go.
  if (mailing.replyTo) message.replyTo = mailing.replyTo;
  else if (parts.replyDomain) message.replyTo = replyAddressOf(delivery.id, parts.replyDomain);
  if (parts.dkim) message.dkim = parts.dkim;
  if (mailing.invitation) {
    message.calendar = buildInvitation(
      mailing.invitation,
      `${delivery.messageId.slice(1, -1)}`,
      mailing.sender,
      { address: delivery.address, name: delivery.name },
      now,
    );
  }
  return message;
}

/** DKIM settings for the sender's domain, if its identity has a key. */
export function dkimFor(
  senderAddress: string,
  dkim: DkimConfig | null | undefined,
): (DkimConfig & { domain: string }) | undefined {
  return dkim ? { ...dkim, domain: domainOf(senderAddress) } : undefined;
}

// Names come from validated requests, but CSV and profile data may not have been: never let CR/LF into a header.
function headerSafe(value: string): string {
  return value.replace(/[\r\n\0]+/g, ' ');
}
