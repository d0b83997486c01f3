import { z } from 'zod';
import { isTimeZone, parseClockTime, WEEKDAY_NAMES } from '../base/local-time.js';
import type { DeliveryPlan } from '../store/records.js';

/**
 * A broadcast's `options.localTime` and `options.window` (issue 41): each recipient at a time of day in
 * their own zone, read from a profile trait (or, for inline recipients, a variable) named by `timezone`,
 * and only inside a sending window. Refused with the path when a time is not `HH:MM` or a zone is not an
 * IANA name the platform knows.
 */

/** `HH:MM`, 00:00 to 23:59. */
const clockTimeSchema = z
  .string()
  .superRefine((value, ctx) => {
    if (parseClockTime(value) === undefined) {
      ctx.addIssue({ code: 'custom', message: 'Must be a time of day HH:MM, from 00:00 to 23:59' });
    }
  })
  .meta({ description: 'A time of day, HH:MM (24 hours).', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' });

/** An IANA time zone name (or UTC). */
const timeZoneSchema = z
  .string()
  .superRefine((value, ctx) => {
    if (!isTimeZone(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `Unknown time zone ${JSON.stringify(value).slice(0, 80)}: give an IANA name such as Europe/Berlin, or UTC`,
      });
    }
  })
  .meta({ description: 'An IANA time zone name, for example Europe/Berlin, or UTC.' });

/** The name of the trait (or inline recipient variable) that holds each recipient's zone. */
const traitNameSchema = z
  .string()
  .min(1, 'Must not be empty')
  .max(128, 'Must be at most 128 characters')
  .meta({
    description: "The trait (or an inline recipient's variable) holding the recipient's IANA time zone.",
  });

/** `options.localTime`: send each recipient at the next `at` in their zone. */
export const localTimeSchema = z
  .object({
    at: clockTimeSchema,
    timezone: traitNameSchema,
    fallback: timeZoneSchema
      .nullish()
      .meta({ description: 'The zone of recipients without a valid one. @default UTC' }),
  })
  .meta({
    description:
      'Send each recipient at the next `at` in their own time zone (the trait `timezone` names), daylight saving included; recipients with no zone or an unknown one use `fallback`.',
  });

/** `options.window`: deliveries only inside these hours, in the recipient's zone. */
export const sendingWindowSchema = z
  .object({
    days: z
      .array(z.enum(WEEKDAY_NAMES))
      .min(1, 'At least one day')
      .max(7)
      .nullish()
      .meta({ description: 'Days it is open (sun ... sat). @default every day' }),
    from: clockTimeSchema,
    to: clockTimeSchema,
    timezone: traitNameSchema.nullish().meta({
      description: "Without localTime: the trait holding the recipient's zone. With it, localTime's is used.",
    }),
    fallback: timeZoneSchema.nullish(),
  })
  .superRefine((value, ctx) => {
    const from = parseClockTime(value.from);
    const to = parseClockTime(value.to);
    if (from !== undefined && to !== undefined && to <= from) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'Must be after from' });
    }
  })
  .meta({
    description:
      'A sending window in the recipient’s own zone, for example weekdays 08:00-20:00: a delivery due outside it waits for its next opening.',
  });

/** The validated options as the plan the mailing keeps, or null when neither was given. */
export function deliveryPlanOf(
  localTime: z.output<typeof localTimeSchema> | null | undefined,
  window: z.output<typeof sendingWindowSchema> | null | undefined,
): DeliveryPlan | null {
  if (!localTime && !window) return null;
  const plan: DeliveryPlan = {
    timezone: localTime?.timezone ?? window?.timezone ?? null,
    fallback: localTime?.fallback ?? window?.fallback ?? 'UTC',
  };
  if (localTime) plan.at = localTime.at;
  if (window) {
    plan.window = { from: window.from, to: window.to };
    if (window.days) plan.window.days = [...new Set(window.days)];
  }
  return plan;
}
