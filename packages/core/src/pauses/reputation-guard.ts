import { domainOf } from '../base/address-parts.js';
import { isStoreOutage } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import type { DeliveryEvents } from '../delivery/delivery-events.js';
import type { PauseRule } from '../store/pause-store.js';
import type { MailingRecord } from '../store/records.js';
import { describeRule } from './describe-rule.js';
import { GUARD_DEFAULTS, type ReputationGuardOptions } from './guard-options.js';
import { pause } from './pause-control.js';
import { createProjectGuardRule } from './project-guard-rule.js';

/** The reputation guard of one process: start with the worker, stop with it; `check` runs one round. */
export interface ReputationGuard {
  start(): void;
  stop(): Promise<void>;
  /** Check every rule once; returns the pauses it wrote. */
  check(): Promise<number>;
}

/** Broadcasts not heard of for this long drop out of the guard's watch. */
const FORGET_MS = 3_600_000;

/**
 * The guard. It watches the broadcasts and destinations this process's worker sends to (from the engine's
 * `delivery` events), and every `checkMs`:
 * - per broadcast, from the store (every worker's outcomes and every inbound signal count): attempts are
 *   its deliveries sent, bounced, complained or failed; a rule crossed pauses the broadcast;
 * - per destination domain, over the rolling window: sender-side refusals in the store against the
 *   attempts this process made there; a rule crossed pauses the domain for `pauseMs`. With several
 *   workers each sees only its own attempts, so the rate reads high and the pause comes sooner (the
 *   careful side);
 * - per project, over its last sends (every worker's, from the store's events): recipient-hard bounces
 *   crossing the rule pause the project's sending (`project-guard-rule.ts`).
 */
export function createReputationGuard(
  ctx: BaseContext,
  options: ReputationGuardOptions = {},
): ReputationGuard {
  const checkMs = options.checkMs ?? GUARD_DEFAULTS.checkMs;
  const b = { ...GUARD_DEFAULTS.broadcast, ...options.broadcast };
  const d = { ...GUARD_DEFAULTS.destination, ...options.destination };
  /** `${projectId} ${ref}` -> last heard (ms). */
  const broadcasts = new Map<string, number>();
  /** projectId -> last heard (ms): projects this process sends for, broadcasts and transactional. */
  const projects = new Map<string, number>();
  const projectRule = createProjectGuardRule(ctx, options.project);
  /** `${projectId} ${domain}` -> attempt times (ms), oldest first. */
  const attempts = new Map<string, number[]>();
  /** Mailing ids seen paused, and the figures at which a resumed broadcast starts counting again. */
  const seenPaused = new Set<string>();
  const baselines = new Map<string, Figures>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<unknown> | undefined;

  ctx.events.view<DeliveryEvents>().on('delivery', (event) => {
    const now = ctx.clock.now().getTime();
    if (event.kind === 'broadcast') broadcasts.set(`${event.projectId} ${event.mailingRef}`, now);
    projects.set(event.projectId, now);
    if (event.latencyMs === null) return;
    const key = `${event.projectId} ${domainOf(event.address)}`;
    const list = attempts.get(key) ?? [];
    list.push(now);
    attempts.set(key, list);
  });

  async function figures(mailing: MailingRecord): Promise<Figures> {
    const counts = await ctx.store.countDeliveries(mailing.id);
    const signals = await ctx.store.countInboundSignals({
      projectId: mailing.projectId,
      mailingId: mailing.id,
      kinds: ['hard-bounce', 'complaint', 'sender-side'],
    });
    const total = (kind: string) => signals.filter((s) => s.kind === kind).reduce((n, s) => n + s.count, 0);
    return {
      attempts: counts.sent + counts.bounced + counts.failed + counts.complained,
      'hard-bounce': total('hard-bounce'),
      complaint: total('complaint'),
      'sender-side': total('sender-side'),
    };
  }

  async function checkBroadcast(mailing: MailingRecord, paused: boolean): Promise<number> {
    // A broadcast resumed (here or elsewhere) is judged afresh from where it was resumed: what made it
    // pause does not pause it again at once.
    if (paused) {
      seenPaused.add(mailing.id);
      return 0;
    }
    const now = await figures(mailing);
    if (seenPaused.delete(mailing.id)) baselines.set(mailing.id, now);
    const base = baselines.get(mailing.id);
    const tried = now.attempts - (base?.attempts ?? 0);
    const total = (kind: keyof Omit<Figures, 'attempts'>) => now[kind] - (base?.[kind] ?? 0);
    const rule = (name: string, signal: string, count: number, threshold: number, minimum: number) => ({
      name,
      signal,
      count,
      attempts: tried,
      rate: tried === 0 ? 0 : count / tried,
      threshold,
      minimum,
      windowMs: null,
      since: base ? null : mailing.createdAt.toISOString(),
    });
    const hard = rule(
      'broadcast.hard-bounces',
      'hard-bounce',
      total('hard-bounce'),
      b.hardBounceRate,
      b.hardBounceMinAttempts,
    );
    const complaints = rule(
      'broadcast.complaints',
      'complaint',
      total('complaint'),
      b.complaintRate,
      b.complaintMin,
    );
    const refusals = rule(
      'broadcast.sender-side',
      'sender-side',
      total('sender-side'),
      b.senderSideRate,
      b.senderSideMin,
    );
    const crossed =
      (tried >= hard.minimum && hard.rate > hard.threshold && hard) ||
      (complaints.count >= complaints.minimum && complaints.rate > complaints.threshold && complaints) ||
      (refusals.count >= refusals.minimum && refusals.rate > refusals.threshold && refusals) ||
      undefined;
    if (!crossed) return 0;
    const written = await pause(
      ctx,
      { projectId: mailing.projectId, scope: 'broadcast', mailing },
      { by: 'guard', reason: describeRule(crossed), rule: crossed },
    );
    // Known paused at once, not at the next check: a resume within one check interval would otherwise
    // never be seen, and the figures that made the pause would make it again. (A pause resumed within the
    // interval by another process, or before this one started, is seen only at its next pause.)
    if (written) seenPaused.add(mailing.id);
    return written ? 1 : 0;
  }

  async function checkDestinations(now: number): Promise<number> {
    const since = now - d.windowMs;
    const byProject = new Map<string, Map<string, number>>();
    for (const [key, list] of attempts) {
      while (list.length > 0 && (list[0] as number) < since) list.shift();
      if (list.length === 0) {
        attempts.delete(key);
        continue;
      }
      const [projectId = '', domain = ''] = key.split(' ');
      const domains = byProject.get(projectId) ?? new Map<string, number>();
      domains.set(domain, list.length);
      byProject.set(projectId, domains);
    }
    let paused = 0;
    for (const [projectId, domains] of byProject) {
      const refused = await ctx.store.countInboundSignals({
        projectId,
        kinds: ['sender-side'],
        since: new Date(since),
      });
      for (const [domain, tried] of domains) {
        const count = refused.filter((s) => s.domain === domain).reduce((n, s) => n + s.count, 0);
        const rate = count / Math.max(tried, count);
        if (count < d.senderSideMin || rate <= d.senderSideRate) continue;
        const rule: PauseRule = {
          name: 'destination.sender-side',
          signal: 'sender-side',
          count,
          attempts: Math.max(tried, count),
          rate,
          threshold: d.senderSideRate,
          minimum: d.senderSideMin,
          windowMs: d.windowMs,
          since: new Date(since).toISOString(),
        };
        const written = await pause(
          ctx,
          { projectId, scope: 'destination', destination: domain },
          { by: 'guard', reason: describeRule(rule), rule, until: new Date(now + d.pauseMs) },
        );
        if (written) paused += 1;
      }
    }
    return paused;
  }

  async function check(): Promise<number> {
    const now = ctx.clock.now().getTime();
    let paused = 0;
    for (const [key, heard] of broadcasts) {
      if (now - heard > FORGET_MS) {
        broadcasts.delete(key);
        continue;
      }
      const [projectId = '', ref = ''] = key.split(' ');
      const mailing = await ctx.store.getMailing(projectId, ref);
      if (!mailing || !['queued', 'scheduled', 'sending'].includes(mailing.status)) continue;
      const pauses = await ctx.store.listPauses({ projectId, now: new Date(now) });
      const held = pauses.some((p) => p.scope === 'broadcast' && p.target === mailing.id);
      paused += await checkBroadcast(mailing, held);
    }
    for (const [projectId, heard] of projects) {
      if (now - heard > FORGET_MS) {
        projects.delete(projectId);
        continue;
      }
      const pauses = await ctx.store.listPauses({ projectId, now: new Date(now) });
      paused += await projectRule.check(
        projectId,
        now,
        pauses.some((p) => p.scope === 'project'),
      );
    }
    return paused + (await checkDestinations(now));
  }

  function round(): void {
    if (running) return;
    running = check()
      .catch((error: unknown) => {
        // A store outage is logged once, by the engine's watch of the store, not by every loop.
        if (!isStoreOutage(error)) ctx.logger.error({ err: error }, 'reputation guard round failed');
      })
      .finally(() => {
        running = undefined;
      });
  }

  return {
    start() {
      timer ??= setInterval(round, checkMs);
      timer.unref?.();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
    check,
  };
}

/** A broadcast's attempts and signals by kind. */
interface Figures {
  attempts: number;
  'hard-bounce': number;
  complaint: number;
  'sender-side': number;
}
