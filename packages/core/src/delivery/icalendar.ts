import type { InvitationSpec } from '../store/records.js';
import type { OutgoingCalendar } from '../transport/transport.js';

/**
 * An RFC 5545 `VEVENT` invitation (method REQUEST) for the TypeScript client's `invitation`.
 * The UID is derived from the delivery's Message-ID so a retried message carries the same event.
 */
export function buildInvitation(
  invitation: InvitationSpec,
  uid: string,
  organizer: { address: string; name: string },
  attendee: { address: string; name: string },
  now: Date,
): OutgoingCalendar {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Mailroom//Mailroom//EN',
    'METHOD:REQUEST',
    'BEGIN:VEVENT',
    `UID:${escapeText(uid)}`,
    `DTSTAMP:${icsDate(now)}`,
    `DTSTART:${icsDate(new Date(invitation.startDate))}`,
    `DTEND:${icsDate(new Date(invitation.endDate))}`,
    `SUMMARY:${escapeText(invitation.title)}`,
    ...(invitation.description ? [`DESCRIPTION:${escapeText(invitation.description)}`] : []),
    ...(invitation.location ? [`LOCATION:${escapeText(invitation.location)}`] : []),
    ...(invitation.url ? [`URL:${escapeText(invitation.url)}`] : []),
    `ORGANIZER;CN=${paramValue(organizer.name)}:mailto:${organizer.address}`,
    `ATTENDEE;CN=${paramValue(attendee.name)};RSVP=TRUE:mailto:${attendee.address}`,
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return { method: 'REQUEST', filename: 'invite.ics', content: `${lines.map(fold).join('\r\n')}\r\n` };
}

function icsDate(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

function escapeText(s: string): string {
  return s
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\;')
    .replace(/,/g, '\\,')
    .replace(/\r?\n|\r/g, '\\n');
}

function paramValue(s: string): string {
  return `"${s.replace(/["\r\n]/g, '')}"`;
}

// RFC 5545 3.1: lines longer than 75 octets are folded with CRLF + space.
function fold(line: string): string {
  const bytes = Buffer.from(line, 'utf8');
  if (bytes.length <= 75) return line;
  const parts: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + (start === 0 ? 75 : 74), bytes.length);
    // Never split inside a UTF-8 sequence.
    while (end < bytes.length && ((bytes[end] as number) & 0xc0) === 0x80) end--;
    parts.push(bytes.subarray(start, end).toString('utf8'));
    start = end;
  }
  return parts.join('\r\n ');
}
