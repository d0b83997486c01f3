import type { Schemas } from '@mailroom/client';
import type { DkimKeyView, DomainView, WebhookEndpointView } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';

/*
 * The API's JSON answers as the engine's view types: the same fields in the same order (the server
 * writes the views with JSON.stringify), with their times as Dates again. So `--json` prints remotely
 * exactly what it prints on the database's machine, and the text output is written once. The generated
 * schema types make a field the document drops or changes a type error here.
 */

/** A webhook endpoint of `GET /webhooks` and friends. */
export function webhookView(wire: Schemas['WebhookEndpoint']): WebhookEndpointView {
  return {
    ...wire,
    events: wire.events ?? null,
    disabledReason: wire.disabledReason ?? null,
    failingSince: dateOrNull(wire.failingSince),
    circuitOpenUntil: dateOrNull(wire.circuitOpenUntil),
    createdAt: date(wire.createdAt, 'createdAt'),
  };
}

/** A sending domain of `GET /domains` and friends. */
export function domainView(wire: Schemas['Domain']): DomainView {
  return {
    ...wire,
    returnPath: wire.returnPath ?? null,
    returnPathMx: wire.returnPathMx ?? null,
    dmarcReports: wire.dmarcReports ?? null,
    signingSelector: wire.signingSelector ?? null,
    keys: wire.keys.map(keyView),
    checkedAt: dateOrNull(wire.checkedAt),
    nextCheckAt: date(wire.nextCheckAt, 'nextCheckAt'),
    createdAt: date(wire.createdAt, 'createdAt'),
  };
}

function keyView(wire: Schemas['DkimKey']): DkimKeyView {
  return {
    ...wire,
    createdAt: date(wire.createdAt, 'createdAt'),
    activatedAt: dateOrNull(wire.activatedAt),
    retireAt: dateOrNull(wire.retireAt),
  };
}

/** An optional time of the wire as a Date, else null. */
export function dateOrNull(value: string | null | undefined): Date | null {
  return value === null || value === undefined ? null : new Date(value);
}

/** A time the answer must have, as a Date; an answer without it names the field. */
export function date(value: string | undefined, field: string): Date {
  if (value === undefined) {
    throw new MailroomError('INTERNAL', `the server's answer has no ${field}: is it an older Mailroom?`);
  }
  return new Date(value);
}
