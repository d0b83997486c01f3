/**
 * The reports a receiving side mails back after it accepted a message, as real MIME: a delivery status
 * notification (RFC 3464) for a bounce, a feedback report (ARF, RFC 5965) for a complaint. Built for the
 * simulator transport, so the engine's inbound path parses what it would get from a real MTA or mailbox
 * provider.
 */
import { randomUUID } from 'node:crypto';
import type { Mailbox, OutgoingMessage } from '@mailroom/core';

/** What a report is about. */
export interface ReportSubject {
  /** The message as it was sent. */
  message: OutgoingMessage;
  /** Where the report goes: the message's envelope sender. */
  returnPath: string;
  /** When the original message arrived. */
  arrivedAt: Date;
  /** The reporting host, for example `simulator.mailroom.test`. */
  host: string;
}

/** Fields of a delivery status notification for one failed recipient. */
export interface BounceDetails {
  /** RFC 3463 status, for example `5.1.1`. */
  status: string;
  /** The remote server's reply, for example `550 5.1.1 User unknown`. */
  diagnostic: string;
}

/**
 * A DSN (RFC 3464): `multipart/report; report-type=delivery-status` with a human-readable part, a
 * `message/delivery-status` part (`Reporting-MTA`, then per recipient `Final-Recipient`, `Action: failed`,
 * `Status`, `Diagnostic-Code`) and the original message's headers (`text/rfc822-headers`).
 */
export function buildDeliveryStatusNotification(about: ReportSubject, bounce: BounceDetails): Uint8Array {
  const recipient = about.message.to.address;
  const action = bounce.status.startsWith('5') ? 'failed' : 'delayed';
  return report(about, {
    from: `Mail Delivery System <MAILER-DAEMON@${about.host}>`,
    subject:
      action === 'failed' ? 'Undelivered Mail Returned to Sender' : 'Delayed Mail (still being retried)',
    reportType: 'delivery-status',
    explanation: [
      `This is the mail system at host ${about.host}.`,
      '',
      "I'm sorry to have to inform you that your message could not",
      'be delivered to one or more recipients.',
      '',
      `<${recipient}>: host ${about.host} said: ${bounce.diagnostic}`,
    ],
    machinePart: {
      contentType: 'message/delivery-status',
      lines: [
        `Reporting-MTA: dns; ${about.host}`,
        `Arrival-Date: ${rfc5322Date(about.arrivedAt)}`,
        '',
        `Final-Recipient: rfc822; ${recipient}`,
        `Original-Recipient: rfc822; ${recipient}`,
        `Action: ${action}`,
        `Status: ${bounce.status}`,
        `Remote-MTA: dns; ${about.host}`,
        `Diagnostic-Code: smtp; ${bounce.diagnostic}`,
        `Last-Attempt-Date: ${rfc5322Date(new Date())}`,
      ],
    },
  });
}

/**
 * A complaint (ARF, RFC 5965): `multipart/report; report-type=feedback-report` with a human-readable
 * part, a `message/feedback-report` part (`Feedback-Type: abuse`, `User-Agent`, `Version: 1`,
 * `Original-Mail-From`, `Original-Rcpt-To`, `Arrival-Date`, `Reported-Domain`) and the original message's
 * headers (`text/rfc822-headers`), whose Message-ID names the message complained about.
 */
export function buildFeedbackReport(about: ReportSubject): Uint8Array {
  const { message } = about;
  return report(about, {
    from: `Feedback Loop <fbl@${about.host}>`,
    subject: `Complaint about a message from ${message.from.address}`,
    reportType: 'feedback-report',
    explanation: [
      `This is an email abuse report for a message received by ${about.host}:`,
      `the recipient <${message.to.address}> marked it as spam.`,
    ],
    machinePart: {
      contentType: 'message/feedback-report',
      lines: [
        'Feedback-Type: abuse',
        'User-Agent: mailroom-simulator/1.0',
        'Version: 1',
        `Original-Mail-From: <${about.returnPath}>`,
        `Original-Rcpt-To: <${message.to.address}>`,
        `Arrival-Date: ${rfc5322Date(about.arrivedAt)}`,
        `Reported-Domain: ${domainOf(message.from.address)}`,
      ],
    },
  });
}

interface ReportParts {
  from: string;
  subject: string;
  reportType: 'delivery-status' | 'feedback-report';
  explanation: string[];
  machinePart: { contentType: string; lines: string[] };
}

function report(about: ReportSubject, parts: ReportParts): Uint8Array {
  const boundary = `=_report_${randomUUID()}`;
  const lines = [
    `From: ${parts.from}`,
    `To: <${about.returnPath}>`,
    `Subject: ${parts.subject}`,
    `Date: ${rfc5322Date(new Date())}`,
    `Message-ID: <${randomUUID()}@${about.host}>`,
    // Reports are automatic: nobody should answer them (RFC 3834).
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    `Content-Type: multipart/report; report-type=${parts.reportType};`,
    ` boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=us-ascii',
    'Content-Transfer-Encoding: 7bit',
    '',
    ...parts.explanation,
    '',
    `--${boundary}`,
    `Content-Type: ${parts.machinePart.contentType}`,
    '',
    ...parts.machinePart.lines,
    '',
    `--${boundary}`,
    'Content-Type: text/rfc822-headers',
    '',
    ...originalHeaders(about.message),
    '',
    `--${boundary}--`,
    '',
  ];
  return new TextEncoder().encode(lines.join('\r\n'));
}

/** The original message's main headers, as its MIME would have carried them (ASCII, encoded words). */
function originalHeaders(message: OutgoingMessage): string[] {
  const headers = [
    `From: ${mailbox(message.from)}`,
    `To: ${mailbox(message.to)}`,
    `Subject: ${encodedWord(message.subject)}`,
    `Message-ID: ${message.messageId}`,
  ];
  for (const [name, value] of Object.entries(message.headers)) {
    headers.push(`${name}: ${encodedWord(value)}`);
  }
  return headers;
}

function mailbox(box: Mailbox): string {
  if (!box.name) return `<${box.address}>`;
  const name = /^[\x20-\x7e]*$/.test(box.name)
    ? `"${box.name.replace(/(["\\])/g, '\\$1')}"`
    : encodedWord(box.name);
  return `${name} <${box.address}>`;
}

/** RFC 2047 B-encoding for non-ASCII text; ASCII stays as it is. */
function encodedWord(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return text;
  return `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

function rfc5322Date(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}
