import { MailroomError } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import type { EventType, PauseEventData } from '../store/event-records.js';
import type { PauseRecord, PauseRule, PauseScope } from '../store/pause-store.js';
import type { MailingRecord } from '../store/records.js';

/** What is paused, as the API, the CLI and the dashboard show it. */
export interface PauseView {
  scope: PauseScope;
  /** The broadcast's ref, the project's id, or the destination's name. */
  target: string;
  /** `destination`: the recipient domains held back. */
  domains: string[];
  by: 'operator' | 'guard';
  reason: string | null;
  rule: PauseRule | null;
  createdAt: Date;
  /** When a timed pause ends by itself; null: until resumed. */
  until: Date | null;
}

/** What to pause: one broadcast (`mailing`), the project's sending, or a destination. */
export interface PauseTarget {
  projectId: string;
  scope: PauseScope;
  /** `broadcast` only. */
  mailing?: MailingRecord;
  /** `destination` only: its name (a domain, or a group name). */
  destination?: string;
  /** `destination`: the recipient domains it covers. @default [destination] */
  domains?: string[];
}

/** Who pauses, why, and for how long. */
export interface PauseRequest {
  by: 'operator' | 'guard';
  reason?: string | null;
  rule?: PauseRule | null;
  /** Ends by itself at this time. */
  until?: Date | null;
}

/**
 * Pause: writes the pause and its `broadcast.paused` event together. Claims pass over what it covers from
 * then on; deliveries in flight finish. Returns false when it was paused already (nothing written).
 */
export async function pause(ctx: BaseContext, target: PauseTarget, request: PauseRequest): Promise<boolean> {
  const now = ctx.clock.now();
  const record: PauseRecord = {
    projectId: target.projectId,
    scope: target.scope,
    target: storedTarget(target),
    domains: target.scope === 'destination' ? domainsOf(target) : [],
    by: request.by,
    reason: request.reason ?? null,
    rule: request.rule ?? null,
    createdAt: now,
    until: request.until ?? null,
  };
  const outbox = await pauseEvent(ctx, 'broadcast.paused', target, record, now);
  return ctx.store.addPause(record, now, outbox);
}

/**
 * Resume: removes the pause and writes its `broadcast.resumed` event together; the deliveries it held
 * back are claimed again at their own times. A broadcast that settled while paused completes. Returns the
 * pause removed, or undefined when none was in force.
 */
export async function resume(
  ctx: BaseContext,
  target: PauseTarget,
  by: 'operator' | 'guard' = 'operator',
): Promise<PauseRecord | undefined> {
  const now = ctx.clock.now();
  const key = storedTarget(target);
  const [current] = (await ctx.store.listPauses({ projectId: target.projectId, now })).filter(
    (p) => p.scope === target.scope && p.target === key,
  );
  const record = current ?? {
    projectId: target.projectId,
    scope: target.scope,
    target: key,
    domains: [],
    by,
    reason: null,
    rule: null,
    createdAt: now,
    until: null,
  };
  const outbox = await pauseEvent(ctx, 'broadcast.resumed', target, { ...record, by, reason: null }, now);
  const removed = await ctx.store.removePause(target.projectId, target.scope, key, now, outbox);
  if (removed && target.mailing) {
    const completed = await ctx.outbox.forMailing('broadcast.completed', target.mailing, now);
    await ctx.store.completeMailingIfSettled(target.mailing.id, now, completed);
  }
  return removed;
}

/** The view of a pause: a broadcast's by its ref (`refs`: mailing id -> ref). */
export function pauseView(record: PauseRecord, refs: ReadonlyMap<string, string>): PauseView {
  return {
    scope: record.scope,
    target: record.scope === 'broadcast' ? (refs.get(record.target) ?? record.target) : record.target,
    domains: record.domains,
    by: record.by,
    reason: record.reason,
    rule: record.rule,
    createdAt: record.createdAt,
    until: record.until,
  };
}

/** A destination's name as pauses key it: trimmed, lower-case; `VALIDATION_FAILED` when empty. */
export function destinationName(name: string): string {
  const trimmed = name.trim().toLowerCase();
  if (trimmed.length === 0 || trimmed.length > 253 || /[\s@/]/.test(trimmed)) {
    throw new MailroomError('VALIDATION_FAILED', `"${name}" is not a destination (a domain or a group name)`);
  }
  return trimmed;
}

function storedTarget(target: PauseTarget): string {
  if (target.scope === 'broadcast') {
    if (!target.mailing) throw new MailroomError('INTERNAL', 'a broadcast pause needs its mailing');
    return target.mailing.id;
  }
  if (target.scope === 'project') return target.projectId;
  return destinationName(target.destination ?? '');
}

function domainsOf(target: PauseTarget): string[] {
  const name = destinationName(target.destination ?? '');
  return [...new Set((target.domains ?? [name]).map((d) => d.toLowerCase()))];
}

async function pauseEvent(
  ctx: BaseContext,
  type: EventType,
  target: PauseTarget,
  record: PauseRecord,
  now: Date,
) {
  const data: PauseEventData = {
    scope: record.scope,
    target: target.mailing?.ref ?? record.target,
    by: record.by,
    reason: record.reason,
    ...(record.scope === 'destination' ? { domains: record.domains } : {}),
    ...(type === 'broadcast.paused' ? { rule: record.rule, until: record.until?.toISOString() ?? null } : {}),
  };
  if (target.mailing) return ctx.outbox.forMailing(type, target.mailing, now, { pause: data });
  return ctx.outbox.event(
    target.projectId,
    type,
    now,
    { mailingRef: null, deliveryId: null, address: null },
    { pause: data },
  );
}
