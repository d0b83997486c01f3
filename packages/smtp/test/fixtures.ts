/**
 * Messages for the SMTP package's tests.
 */
import { randomUUID } from 'node:crypto';
import type { OutgoingMessage } from '@mailroom/core';

/** A small valid message with a fresh Message-ID; `overrides` replace whole fields. */
export function makeMessage(overrides: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return {
    messageId: `<${randomUUID()}@mailroom.test>`,
    from: { address: 'sender@example.com', name: 'Sender' },
    to: { address: 'recipient@example.org', name: 'Recipient' },
    subject: 'Hello',
    text: 'Hello, world.',
    attachments: [],
    headers: {},
    ...overrides,
  };
}

/** An iCalendar invitation (RFC 5545) as the engine builds one. */
export const INVITATION = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Mailroom//Test//EN',
  'METHOD:REQUEST',
  'BEGIN:VEVENT',
  'UID:event-1@mailroom.test',
  'DTSTAMP:20260101T090000Z',
  'DTSTART:20260110T090000Z',
  'DTEND:20260110T100000Z',
  'SUMMARY:Réunion de lancement',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');
