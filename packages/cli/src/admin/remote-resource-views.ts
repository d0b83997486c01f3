import type { Schemas } from '@mailroom/client';
import type {
  AudienceGroupView,
  ImportView,
  KeyView,
  MailingView,
  MessageStatusView,
  ProfileDetailView,
  ProfileView,
  RecipientStatusView,
  SenderView,
  SuppressionView,
  TemplateView,
  Variables,
} from '@mailroom/core';
import { date, dateOrNull } from './remote-views.js';

/*
 * The answers of the management routes as the engine's views, as remote-views.ts does for webhooks and
 * domains: the wire's own field order (a spread, then the times made Dates in place), so `--json` prints
 * the same bytes remotely and locally.
 */

/** A template of `/templates`. */
export function templateView(wire: Schemas['Template']): TemplateView {
  return {
    ...wire,
    createdAt: date(wire.createdAt, 'createdAt'),
    updatedAt: date(wire.updatedAt, 'updatedAt'),
  };
}

/** A sender identity of `/senders`. */
export function senderView(wire: Schemas['Sender']): SenderView {
  return { ...wire, createdAt: date(wire.createdAt, 'createdAt') };
}

/** A suppression of `/suppressions`. */
export function suppressionView(wire: Schemas['Suppression']): SuppressionView {
  return { ...wire, createdAt: date(wire.createdAt, 'createdAt') };
}

/** An API key of `/keys`. */
export function apiKeyView(wire: Schemas['ApiKey']): KeyView {
  return {
    ...wire,
    createdAt: date(wire.createdAt, 'createdAt'),
    lastUsedAt: dateOrNull(wire.lastUsedAt),
    revokedAt: dateOrNull(wire.revokedAt),
    expiresAt: dateOrNull(wire.expiresAt),
    replacedBy: wire.replacedBy ?? null,
    // A server from before keys had names does not send the field.
    name: wire.name ?? null,
  };
}

/** An audience group of `/audience/groups`. */
export function groupView(wire: Schemas['AudienceGroup']): AudienceGroupView {
  return { ...wire, createdAt: date(wire.createdAt, 'createdAt') };
}

/** A profile of a listing (`/audience/profiles`, a group's members). */
export function profileView(wire: Schemas['Profile']): ProfileView {
  const { suppression: _suppression, ...profile } = wire;
  return {
    ...profile,
    traits: profile.traits as Variables,
    createdAt: date(wire.createdAt, 'createdAt'),
    updatedAt: date(wire.updatedAt, 'updatedAt'),
  };
}

/** One profile with its suppression (`GET /audience/profiles/{email}`). */
export function profileDetailView(wire: Schemas['Profile']): ProfileDetailView {
  const suppression = wire.suppression
    ? {
        ...wire.suppression,
        detail: wire.suppression.detail ?? null,
        createdAt: date(wire.suppression.createdAt, 'createdAt'),
      }
    : null;
  const topics = (wire.topics ?? []).map((t) => ({ ...t }));
  const consent = (wire.consent ?? []).map((r) => ({ ...r, at: date(r.at, 'at') }));
  return { ...wire, ...profileView(wire), suppression, topics, consent };
}

/** An import of `/audience/imports`. */
export function importView(wire: Schemas['Import']): ImportView {
  return {
    ...wire,
    url: wire.url ?? null,
    rowErrors: wire.rowErrors ?? [],
    error: wire.error ?? null,
    createdAt: date(wire.createdAt, 'createdAt'),
    updatedAt: date(wire.updatedAt, 'updatedAt'),
  };
}

/** A broadcast or message of `/broadcasts` and `/messages`, without what only those routes add. */
export function mailingView(wire: Schemas['Mailing']): MailingView {
  const {
    sources: _s,
    recipients: _r,
    more: _m,
    waiting,
    ...mailing
  } = wire as Schemas['Mailing'] & {
    sources?: unknown;
    recipients?: unknown;
    more?: unknown;
  };
  return {
    ...mailing,
    subject: mailing.subject ?? '',
    sender: mailing.sender ?? { address: '', name: '' },
    createdAt: date(mailing.createdAt, 'createdAt'),
    scheduleFor: dateOrNull(mailing.scheduleFor),
    batchCount: mailing.batchCount ?? 0,
    lateByMs: mailing.lateByMs ?? null,
    ...(waiting
      ? { waiting: waiting.map((w) => ({ hour: date(w.hour, 'waiting.hour'), count: w.count })) }
      : {}),
  };
}

/** A message with its recipients (`GET /messages/{ref}`). */
export function messageStatusView(wire: Schemas['MessageStatus']): MessageStatusView {
  // `waiting` is read (as dates) by mailingView only.
  const { waiting: _waiting, ...rest } = wire;
  return { ...rest, ...mailingView(wire), recipients: wire.recipients.map(recipientView), more: wire.more };
}

function recipientView(wire: Schemas['Recipient']): RecipientStatusView {
  return {
    ...wire,
    name: wire.name ?? '',
    // A server from before recipients had their subject: none to show.
    subject: wire.subject ?? '',
    nextAttemptAt: date(wire.nextAttemptAt, 'nextAttemptAt'),
    sentAt: dateOrNull(wire.sentAt),
    lastResponse: wire.lastResponse ?? null,
    lastError: wire.lastError ?? null,
    createdAt: date(wire.createdAt, 'createdAt'),
    updatedAt: date(wire.updatedAt, 'updatedAt'),
    timeline: wire.timeline.map((entry) => ({
      ...entry,
      at: date(entry.at, 'at'),
      details: entry.details as RecipientStatusView['timeline'][number]['details'],
    })),
    reports: (wire.reports ?? []).map((report) => ({
      ...report,
      source: report.source as RecipientStatusView['reports'][number]['source'],
      reason: report.reason ?? null,
      status: report.status ?? null,
      createdAt: date(report.createdAt, 'createdAt'),
    })),
  };
}
