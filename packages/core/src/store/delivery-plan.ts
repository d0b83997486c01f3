import { isTimeZone, nextInWindow, nextLocalTime, parseClockTime } from '../base/local-time.js';
import type { DeliveryPlan, Variables } from './records.js';

/**
 * When one recipient of a mailing with a {@link DeliveryPlan} is due: the next `at` in their zone at or
 * after `notBefore`, then moved into the sending window if it falls outside. Their zone is the plan's
 * trait in their traits (sources) or variables (inline recipients); none, or a name `Intl` does not know,
 * is the plan's fallback. The answer of a (plan, notBefore, zone) is kept: a batch of thousands of
 * recipients in a handful of zones costs a handful of time-zone computations.
 */
export function plannedDue(
  plan: DeliveryPlan,
  notBefore: Date,
  recipient: { variables?: Variables; traits?: Variables },
): Date {
  const zone = zoneOf(plan, recipient);
  let byStart = cache.get(plan);
  if (!byStart) {
    byStart = new Map();
    cache.set(plan, byStart);
  }
  const key = `${notBefore.getTime()}|${zone}`;
  let due = byStart.get(key);
  if (due === undefined) {
    let t = notBefore.getTime();
    const at = plan.at === undefined ? undefined : parseClockTime(plan.at);
    if (at !== undefined) t = nextLocalTime(t, at, zone);
    if (plan.window) t = nextInWindow(t, plan.window, zone);
    due = t;
    if (byStart.size < 10_000) byStart.set(key, due);
  }
  return new Date(due);
}

/**
 * Outside the plan's window at `now` for this recipient: when it opens next; else undefined (no window, or
 * open). The worker's check at send time, for deliveries that became due inside the window but were not
 * sent before it closed.
 */
export function windowOpensAt(
  plan: DeliveryPlan,
  now: Date,
  recipient: { variables?: Variables; traits?: Variables },
): Date | undefined {
  if (!plan.window) return undefined;
  const opens = nextInWindow(now.getTime(), plan.window, zoneOf(plan, recipient));
  return opens > now.getTime() ? new Date(opens) : undefined;
}

/** The recipient's zone under `plan`: their trait or variable if it names a known zone, else the fallback. */
export function zoneOf(plan: DeliveryPlan, recipient: { variables?: Variables; traits?: Variables }): string {
  if (plan.timezone === null) return plan.fallback;
  const given = recipient.traits?.[plan.timezone] ?? recipient.variables?.[plan.timezone];
  return isTimeZone(given) ? given : isTimeZone(plan.fallback) ? plan.fallback : 'UTC';
}

const cache = new WeakMap<DeliveryPlan, Map<string, number>>();
