/**
 * A project's receiving settings (issue 40): retention, the size cap and per-delivery reply addresses,
 * each null for the engine's default. Read at every received message and by the mailing cache (reply
 * addresses); written by `receiving.updateSettings`.
 */
import { z } from 'zod';
import { MailroomError } from '../base/errors.js';
import { REPLY_PREFIX } from '../base/reply-address.js';
import type { BaseContext } from '../context/base-context.js';
import { toValidationIssues } from '../request/index.js';
import type { ReceivingSettingsRecord } from '../store/receiving-store.js';
import {
  MAX_MESSAGE_BYTES_DEFAULT,
  RECEIVED_RETENTION_DAYS_DEFAULT,
  type ReceivingOptions,
} from './receiving-options.js';
import type { ReceivingSettingsInput, ReceivingSettingsView } from './receiving-types.js';
import { matchRoute } from './route-match.js';

const DAY_MS = 86_400_000;
/** The largest cap a project may set: what a listener holds in memory per connection. */
export const MAX_MESSAGE_BYTES_LIMIT = 100 * 1024 * 1024;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

const SETTINGS_SCHEMA = z.strictObject({
  retention_days: z.number().int().min(1).max(36_500).nullable().optional(),
  max_message_bytes: z.number().int().min(1024).max(MAX_MESSAGE_BYTES_LIMIT).nullable().optional(),
  reply_domain: z
    .string()
    .trim()
    .transform((d) => d.toLowerCase())
    .pipe(z.string().regex(DOMAIN, 'A receiving domain (in.example.com)'))
    .nullable()
    .optional(),
});

/** What applies to one project: its settings over the engine's options. */
export interface EffectiveReceiving {
  /** Milliseconds a received message is kept; Infinity: kept. */
  retentionMs: number;
  maxMessageBytes: number;
  replyDomain: string | null;
}

/** The engine's defaults, checked once. */
export function receivingDefaults(options: ReceivingOptions): {
  retentionDays: number;
  maxMessageBytes: number;
} {
  const retentionDays = options.retentionDays ?? RECEIVED_RETENTION_DAYS_DEFAULT;
  const maxMessageBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES_DEFAULT;
  if (!(retentionDays > 0)) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      'receiving.retentionDays must be a positive number (Infinity keeps)',
    );
  }
  if (!(Number.isSafeInteger(maxMessageBytes) && maxMessageBytes > 0)) {
    throw new MailroomError('VALIDATION_FAILED', 'receiving.maxMessageBytes must be a positive whole number');
  }
  return { retentionDays, maxMessageBytes };
}

/** The settings that apply to a project: its stored settings `s` over the engine's defaults. */
export function effectiveReceiving(
  defaults: { retentionDays: number; maxMessageBytes: number },
  s: ReceivingSettingsRecord | undefined,
): EffectiveReceiving {
  return {
    retentionMs: (s?.retentionDays ?? defaults.retentionDays) * DAY_MS,
    maxMessageBytes: s?.maxMessageBytes ?? defaults.maxMessageBytes,
    replyDomain: s?.replyDomain ?? null,
  };
}

/** The settings as the API shows them (null: the engine's default). */
export function settingsView(
  s: ReceivingSettingsRecord | undefined,
  defaults: { retentionDays: number; maxMessageBytes: number },
): ReceivingSettingsView {
  return {
    retention_days: s?.retentionDays ?? null,
    max_message_bytes: s?.maxMessageBytes ?? null,
    reply_domain: s?.replyDomain ?? null,
    defaults: {
      retention_days: Number.isFinite(defaults.retentionDays) ? defaults.retentionDays : null,
      max_message_bytes: defaults.maxMessageBytes,
    },
    updated_at: s ? s.updatedAt.toISOString() : null,
  };
}

/**
 * Applies a patch to a project's settings (absent fields kept, null back to the default). A reply domain
 * needs a route of the project that takes `reply+...@` that domain, or replies would be refused at RCPT.
 */
export async function updateSettings(
  ctx: BaseContext,
  projectId: string,
  input: ReceivingSettingsInput,
): Promise<ReceivingSettingsRecord> {
  const parsed = SETTINGS_SCHEMA.safeParse(input);
  if (!parsed.success) {
    throw new MailroomError('VALIDATION_FAILED', 'Invalid receiving settings', {
      issues: toValidationIssues(parsed.error.issues),
    });
  }
  const patch = parsed.data;
  const current = await ctx.store.getReceivingSettings(projectId);
  const next: ReceivingSettingsRecord = {
    projectId,
    retentionDays:
      patch.retention_days !== undefined ? patch.retention_days : (current?.retentionDays ?? null),
    maxMessageBytes:
      patch.max_message_bytes !== undefined ? patch.max_message_bytes : (current?.maxMessageBytes ?? null),
    replyDomain: patch.reply_domain !== undefined ? patch.reply_domain : (current?.replyDomain ?? null),
    updatedAt: ctx.clock.now(),
  };
  if (next.replyDomain && patch.reply_domain !== undefined) {
    const route = matchRoute(await ctx.store.findReceivingRoutes(next.replyDomain), `${REPLY_PREFIX}x`);
    if (!route || route.projectId !== projectId) {
      const message = `No route of the project takes ${REPLY_PREFIX}...@${next.replyDomain} (add one, e.g. pattern reply+*)`;
      throw new MailroomError('VALIDATION_FAILED', message, {
        issues: [{ code: 'custom', path: ['reply_domain'], message }],
      });
    }
  }
  await ctx.store.putReceivingSettings(next);
  return next;
}
