import { z } from 'zod';
import { MailroomError } from '../base/errors.js';
import { toValidationIssues } from '../request/index.js';

/** A signup as a form posts it (form-encoded fields or JSON), after parsing. */
export interface SignupInput {
  email: string;
  name: string | null;
  /** The consent text version the page showed, when it says. */
  consentVersion: number | null;
  /** The honeypot was filled (a bot). */
  honeypot: boolean;
}

/** The honeypot field: hidden from people by the page, filled by bots that fill every field. */
export const HONEYPOT_FIELD = 'website';

const SCHEMA = z.object({
  email: z.string().max(320),
  name: z.string().max(256).optional(),
  consent_version: z.coerce.number().int().positive().max(1_000_000).optional(),
  [HONEYPOT_FIELD]: z.string().max(2000).optional(),
});

/** Parses a signup body; unknown fields are ignored (a site's form may carry its own). */
export function parseSignupBody(body: unknown): SignupInput {
  const result = SCHEMA.safeParse(body);
  if (!result.success) {
    throw new MailroomError('VALIDATION_FAILED', 'Invalid signup', {
      issues: toValidationIssues(result.error.issues),
    });
  }
  const value = result.data;
  return {
    email: value.email,
    name: value.name?.trim() || null,
    consentVersion: value.consent_version ?? null,
    honeypot: (value[HONEYPOT_FIELD] ?? '').trim() !== '',
  };
}
