import { domainOf } from '../base/address-parts.js';
import { isStoreOutage } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import type { DeliveryEvents } from '../delivery/delivery-events.js';
import type { PauseRecord, PauseRule } from '../store/pause-store.js';
import type { MailingRecord } from '../store/records.js';
import {
  addFigures,
  crossedBroadcastRule,
  type Figures,
  noFigures,
  signalTotal,
  storeAttempts,
  storeSignals,
  sumFiguresInto,
} from './broadcast-rule.js';
import { describeRule } from './describe-rule.js';
import { GUARD_DEFAULTS, type ReputationGuardOptions } from './guard-options.js';
import { createHeldPauses } from './held-pauses.js';
import { createLastSends, createWindowCounts, type LastSends, type WindowCounts } from './outcome-windows.js';
import { type PauseRequest, type PauseTarget, pause } from './pause-control.js';
import { createProjectGuardRule } from './project-guard-rule.js';

/** The reputation guard of one process: start with the worker, stop with it; `check` runs one round. */
export interface ReputationGuard {
  start(): void;
  stop(): Promise<void>;
  /** Read the store's figures and check every rule once; returns the pauses it wrote. */
  check(): Promise<number>;
  /** The pauses this process knows of, for the delivery loop (`DeliveryContext.heldBack`). */
  held(projectId: string, mailingId: string, address: string): boolean;
}

/** True when `address` is at `domain` (its part after the only `@`), without slicing it. */
function atDomain(address: string, domain: string): boolean {
  const at = address.length - domain.length - 1;
  return at > 0 && address.charCodeAt(at) === 64 && address.endsWith(domain) && address.indexOf('@') === at;
}

/** Broadcasts, projects and destinations not heard of for this long drop out of the guard's watch. */
const FORGET_MS = 3_600_000;
/**
 * A round of store reads is started no sooner than this many times its last duration after it: on a
 * mailing so large that counting it takes long, the reads stay a small share of the store's time.
 */
const ROUND_SPACING = 3;
/**
 * A broadcast's attempts (a count over its deliveries, the dearest read) are read at most this often, or
 * 40 times the last count's length if longer, unless the store's signals grew by more than this process's
 * own (another worker's refusals: its attempts are read at once, so that its signals are never judged
 * against this process's attempts alone). Between counts this process adds its own attempts.
 */
const ATTEMPTS_EVERY_MS = 2_000;
const ATTEMPTS_SPACING = 40;

/** A broadcast watched: the store's figures at the last round, and this process's outcomes since. */
interface BroadcastWatch {
  projectId: string;
  ref: string;
  heard: number;
  mailing: MailingRecord | undefined;
  /**
   * The store's figures, less those at the last resume: signals at the last round, attempts at the last
   * count of them.
   */
  shared: Figures;
  /** This process's outcomes: signals since the last round's read began, attempts since the last count's. */
  local: Figures;
  /** The store's figures when it was resumed (seen resumed); null: counted from its creation. */
  base: Figures | null;
  /** When the store's attempts were last counted (ms; 0: never), and how long that took. */
  countedAt: number;
  countMs: number;
  /** The store's signals (all kinds) at the last round: another worker's show as growth beyond ours. */
  storeSignalTotal: number;
  /** `shared + local`, judged at every outcome (kept: no allocation per outcome). */
  sum: Figures;
}

/** A destination domain of a project watched: this process's attempts, the store's refusals. */
interface DestinationWatch {
  projectId: string;
  domain: string;
  /** Its key among the pauses being written. */
  key: string;
  heard: number;
  window: WindowCounts;
  /** Every worker's sender-side refusals in the window, at the last round. */
  sharedRefusals: number;
  /** This process's refusals since the last round's read began. */
  localRefusals: number;
  /** Seen paused (here, or in the store's list): a resume seen later starts its count afresh. */
  seenPaused: boolean;
  /** When it was seen resumed (ms; 0: never): refusals before it are not held against it again. */
  resumedAt: number;
}

/** A project watched: its last sends in this process. */
interface ProjectWatch {
  heard: number;
  sends: LastSends;
}

/**
 * The guard. It judges every rule as each outcome of this process's worker is recorded (the engine's
 * `delivery` event), from in-process counters (O(1) an outcome) added to the store's figures of the last
 * round; a round reads the store (every worker's outcomes and every inbound signal, and the pauses in
 * force) every `syncMs` while outcomes flow, and every `checkMs` in any case:
 * - per broadcast, over its life (from its last resume): attempts are its deliveries sent, bounced,
 *   complained or failed; a rule crossed pauses the broadcast;
 * - per destination domain, over the rolling window: sender-side refusals (every worker's, from the
 *   store, plus this process's since) against the attempts this process made there; a rule crossed
 *   pauses the domain for `pauseMs`. With several workers each counts only its own attempts, so the
 *   rate reads high and the pause comes sooner (the careful side);
 * - per project, over its last sends: this process's own at each outcome, and every worker's (the
 *   store's events) at each round (`project-guard-rule.ts`); crossing pauses the project's sending.
 * A pause is written at once; the process holds back its own claimed deliveries the pause covers from
 * that moment (`held`), and every worker's next claim passes over them.
 */
export function createReputationGuard(
  ctx: BaseContext,
  options: ReputationGuardOptions = {},
): ReputationGuard {
  const checkMs = options.checkMs ?? GUARD_DEFAULTS.checkMs;
  const syncMs = Math.min(options.syncMs ?? GUARD_DEFAULTS.syncMs, checkMs);
  const b = { ...GUARD_DEFAULTS.broadcast, ...options.broadcast };
  const d = { ...GUARD_DEFAULTS.destination, ...options.destination };
  const p = { ...GUARD_DEFAULTS.project, ...options.project };
  const projectRule = createProjectGuardRule(ctx, options.project);
  const heldPauses = createHeldPauses();
  /** `${projectId} ${ref}` -> its watch. */
  const broadcasts = new Map<string, BroadcastWatch>();
  /** `${projectId} ${domain}` -> its watch. */
  const destinations = new Map<string, DestinationWatch>();
  const projects = new Map<string, ProjectWatch>();
  /** Mailing ids seen paused: a resume seen later starts their count afresh. */
  const seenPaused = new Set<string>();
  /** Pauses being written by this process, by key (one write each). */
  const writing = new Set<string>();
  let outcomesSinceRound = 0;
  /** Deliveries were held back since the last round. */
  let heldSeen = false;
  let lastRoundAt = 0;
  let nextRoundAt = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<unknown> | undefined;
  // The watches of the last outcome: a broadcast's outcomes come in runs of one broadcast and one
  // domain, so most outcomes find theirs without building a key string.
  let lastProject: { id: string; watch: ProjectWatch } | undefined;
  let lastBroadcast: BroadcastWatch | undefined;
  let lastDestination: DestinationWatch | undefined;

  ctx.events.view<DeliveryEvents>().on('delivery', (event) => {
    const now = ctx.clock.now().getTime();
    outcomesSinceRound++;
    const { projectId, status, refusal } = event;
    // A refusal held for a sender-side block (`queued`) was tried as much as one that failed.
    const tried = status === 'sent' || status === 'bounced' || status === 'failed' || refusal !== null;
    let project = lastProject?.id === projectId ? lastProject.watch : projects.get(projectId);
    if (!project) {
      project = { heard: now, sends: createLastSends(p.windowSends, p.maxWindowMs) };
      projects.set(projectId, project);
    }
    if (lastProject?.watch !== project) lastProject = { id: projectId, watch: project };
    project.heard = now;
    if (tried) {
      project.sends.add(status === 'bounced', now);
      judgeProject(projectId, project, now);
    }
    if (event.kind === 'broadcast') {
      let watch =
        lastBroadcast?.ref === event.mailingRef && lastBroadcast.projectId === projectId
          ? lastBroadcast
          : broadcasts.get(`${projectId} ${event.mailingRef}`);
      if (!watch) {
        watch = newBroadcastWatch(projectId, event.mailingRef, now);
        broadcasts.set(`${projectId} ${event.mailingRef}`, watch);
      }
      lastBroadcast = watch;
      watch.heard = now;
      if (tried) watch.local.attempts += 1;
      if (refusal === 'hard-bounce' || refusal === 'sender-side') watch.local[refusal] += 1;
      judgeBroadcast(watch);
    }
    if (event.latencyMs === null) return;
    let watch =
      lastDestination?.projectId === projectId && atDomain(event.address, lastDestination.domain)
        ? lastDestination
        : undefined;
    if (!watch) {
      const domain = domainOf(event.address);
      watch = destinations.get(`${projectId} ${domain}`);
      watch ??= newDestinationWatch(projectId, domain, now);
    }
    lastDestination = watch;
    watch.heard = now;
    const refused = refusal === 'sender-side';
    watch.window.add(now, refused);
    if (refused) watch.localRefusals += 1;
    judgeDestination(watch, now);
  });

  function newDestinationWatch(projectId: string, domain: string, now: number): DestinationWatch {
    const watch: DestinationWatch = {
      projectId,
      domain,
      key: `destination ${projectId} ${domain}`,
      heard: now,
      window: createWindowCounts(d.windowMs),
      sharedRefusals: 0,
      localRefusals: 0,
      seenPaused: false,
      resumedAt: 0,
    };
    destinations.set(`${projectId} ${domain}`, watch);
    return watch;
  }

  function newBroadcastWatch(projectId: string, ref: string, now: number): BroadcastWatch {
    const watch: BroadcastWatch = {
      projectId,
      ref,
      heard: now,
      mailing: undefined,
      shared: noFigures(),
      local: noFigures(),
      base: null,
      countedAt: 0,
      countMs: 0,
      storeSignalTotal: 0,
      sum: noFigures(),
    };
    // The mailing (for its id) is read once; outcomes are counted meanwhile and judged when it comes.
    ctx.store.getMailing(projectId, ref).then(
      (mailing) => {
        watch.mailing = mailing;
        judgeBroadcast(watch);
      },
      () => {},
    );
    return watch;
  }

  /** Writes a pause once (at a time) per key; what it covers is held back here at once. */
  function write(key: string, target: PauseTarget, request: PauseRequest, onDone?: () => void): void {
    if (writing.has(key)) return;
    writing.add(key);
    heldPauses.hold(target);
    pause(ctx, target, request)
      .then(
        () => {
          heldPauses.written(target, Date.now());
          onDone?.();
        },
        (error: unknown) => {
          heldPauses.release(target);
          if (!isStoreOutage(error)) ctx.logger.error({ err: error }, 'reputation guard could not pause');
        },
      )
      .finally(() => writing.delete(key));
  }

  function judgeBroadcast(watch: BroadcastWatch): number {
    const mailing = watch.mailing;
    if (!mailing || writing.has(mailing.id) || heldPauses.heldMailing(mailing.projectId, mailing.id))
      return 0;
    const since = watch.base ? null : mailing.createdAt.toISOString();
    const rule = crossedBroadcastRule(sumFiguresInto(watch.sum, watch.shared, watch.local), b, since);
    if (!rule) return 0;
    write(
      mailing.id,
      { projectId: mailing.projectId, scope: 'broadcast', mailing },
      { by: 'guard', reason: describeRule(rule), rule },
      // Known paused at once, not at the next round: a resume within one round would otherwise never
      // be seen, and the figures that made the pause would make it again.
      () => seenPaused.add(mailing.id),
    );
    return 1;
  }

  function judgeDestination(watch: DestinationWatch, now: number): number {
    const { projectId, domain, key } = watch;
    const window = watch.window.totals(now);
    const count = Math.max(watch.sharedRefusals + watch.localRefusals, window.refusals);
    if (count < d.senderSideMin) return 0;
    const attempts = Math.max(window.attempts, count);
    const rate = attempts === 0 ? 0 : count / attempts;
    if (rate <= d.senderSideRate) return 0;
    if (writing.has(key) || heldPauses.heldDomain(projectId, domain)) return 0;
    const rule: PauseRule = {
      name: 'destination.sender-side',
      signal: 'sender-side',
      count,
      attempts,
      rate,
      threshold: d.senderSideRate,
      minimum: d.senderSideMin,
      windowMs: d.windowMs,
      since: new Date(now - d.windowMs).toISOString(),
    };
    write(
      key,
      { projectId, scope: 'destination', destination: domain },
      { by: 'guard', reason: describeRule(rule), rule, until: new Date(now + d.pauseMs) },
      () => {
        watch.seenPaused = true;
      },
    );
    return 1;
  }

  function judgeProject(projectId: string, watch: ProjectWatch, now: number): number {
    const key = `project ${projectId}`;
    const { sends, hard, since } = watch.sends;
    if (sends < p.hardBounceMinSends || hard / sends <= p.hardBounceRate) return 0;
    if (writing.has(key) || heldPauses.heldProject(projectId)) return 0;
    const rule: PauseRule = {
      name: 'project.hard-bounces',
      signal: 'hard-bounce',
      count: hard,
      attempts: sends,
      rate: hard / sends,
      threshold: p.hardBounceRate,
      minimum: p.hardBounceMinSends,
      windowMs: Math.max(1, now - since),
      since: new Date(since).toISOString(),
    };
    // A pause of the project is its operator's to lift: what made it is not held against it again.
    write(key, { projectId, scope: 'project' }, { by: 'guard', reason: describeRule(rule), rule }, () =>
      watch.sends.clear(),
    );
    return 1;
  }

  /** One round of store reads: the pauses in force, then every rule with the store's figures. */
  async function check(): Promise<number> {
    const now = ctx.clock.now().getTime();
    outcomesSinceRound = 0;
    heldSeen = false;
    let paused = 0;
    const pausesOf = new Map<string, PauseRecord[]>();
    for (const [projectId, watch] of projects) {
      if (now - watch.heard > FORGET_MS) {
        projects.delete(projectId);
        continue;
      }
      const readAt = Date.now();
      const pauses = await ctx.store.listPauses({ projectId, now: new Date(now) });
      pausesOf.set(projectId, pauses);
      heldPauses.replace(projectId, pauses, readAt);
      seeDestinationResumes(projectId, now);
      const wasPaused = seenPaused.has(`project ${projectId}`);
      const isPaused = pauses.some((x) => x.scope === 'project');
      if (isPaused) seenPaused.add(`project ${projectId}`);
      else if (wasPaused) {
        seenPaused.delete(`project ${projectId}`);
        watch.sends.clear();
      }
      paused += await projectRule.check(projectId, now, isPaused);
    }
    for (const [key, watch] of broadcasts) {
      if (now - watch.heard > FORGET_MS) {
        broadcasts.delete(key);
        continue;
      }
      paused += await roundBroadcast(watch, now, pausesOf);
    }
    return paused + (await roundDestinations(now));
  }

  async function roundBroadcast(
    watch: BroadcastWatch,
    now: number,
    pausesOf: Map<string, PauseRecord[]>,
  ): Promise<number> {
    const mailing = await ctx.store.getMailing(watch.projectId, watch.ref);
    if (!mailing || !['queued', 'scheduled', 'sending'].includes(mailing.status)) return 0;
    watch.mailing = mailing;
    const pauses =
      pausesOf.get(mailing.projectId) ??
      (await ctx.store.listPauses({ projectId: mailing.projectId, now: new Date(now) }));
    // A broadcast resumed (here or elsewhere) is judged afresh from where it was resumed: what made it
    // pause does not pause it again at once.
    if (pauses.some((x) => x.scope === 'broadcast' && x.target === mailing.id) || writing.has(mailing.id)) {
      seenPaused.add(mailing.id);
      return 0;
    }
    const reading = { ...watch.local };
    const resumed = seenPaused.has(mailing.id);
    const figures = await storeSignals(ctx, mailing);
    const total = signalTotal(figures);
    // Another worker's signals (growth beyond this process's own since the last round), a resume, or the
    // time: count the attempts too.
    const foreign = total - watch.storeSignalTotal > signalTotal(reading);
    watch.storeSignalTotal = total;
    const due = now - watch.countedAt >= Math.max(ATTEMPTS_EVERY_MS, ATTEMPTS_SPACING * watch.countMs);
    const counted = resumed || foreign || due;
    if (counted) {
      const started = Date.now();
      figures.attempts = await storeAttempts(ctx, mailing);
      watch.countMs = Date.now() - started;
      watch.countedAt = now;
    }
    if (seenPaused.delete(mailing.id)) {
      watch.base = figures;
      watch.local = noFigures();
    } else {
      watch.local = addFigures(watch.local, reading, -1);
      // Not counted this round: this process's attempts since the last count stay its own.
      if (!counted) watch.local.attempts += reading.attempts;
    }
    const shared = watch.base ? addFigures(figures, watch.base, -1) : figures;
    if (!counted) shared.attempts = watch.shared.attempts;
    watch.shared = shared;
    return judgeBroadcast(watch);
  }

  /**
   * A destination resumed (by an operator, or its timed pause ended) is judged afresh from then: what
   * made it pause does not pause it again at its next outcome. Run right after the pauses are read, before
   * any outcome is judged against them.
   */
  function seeDestinationResumes(projectId: string, now: number): void {
    for (const watch of destinations.values()) {
      if (watch.projectId !== projectId) continue;
      if (heldPauses.heldDomain(projectId, watch.domain) || writing.has(watch.key)) {
        watch.seenPaused = true;
      } else if (watch.seenPaused) {
        watch.seenPaused = false;
        watch.resumedAt = now;
        watch.window.clear();
        watch.localRefusals = 0;
        watch.sharedRefusals = 0;
      }
    }
  }

  async function roundDestinations(now: number): Promise<number> {
    const since = now - d.windowMs;
    const byProject = new Map<string, DestinationWatch[]>();
    for (const [key, watch] of destinations) {
      if (now - watch.heard > d.windowMs) {
        destinations.delete(key);
        continue;
      }
      byProject.set(watch.projectId, [...(byProject.get(watch.projectId) ?? []), watch]);
    }
    let paused = 0;
    for (const [projectId, watches] of byProject) {
      const reading = watches.map((w) => w.localRefusals);
      const refused = await ctx.store.countInboundSignals({
        projectId,
        kinds: ['sender-side'],
        since: new Date(since),
      });
      // A destination resumed within the window counts from its resume (rare: one more read each).
      const sinceResume = new Map<DestinationWatch, number>();
      for (const watch of watches) {
        if (watch.resumedAt <= since) continue;
        const counts = await ctx.store.countInboundSignals({
          projectId,
          kinds: ['sender-side'],
          since: new Date(watch.resumedAt),
        });
        sinceResume.set(
          watch,
          counts.filter((s) => s.domain === watch.domain).reduce((n, s) => n + s.count, 0),
        );
      }
      watches.forEach((watch, i) => {
        watch.localRefusals = Math.max(0, watch.localRefusals - (reading[i] as number));
        watch.sharedRefusals =
          sinceResume.get(watch) ??
          refused.filter((s) => s.domain === watch.domain).reduce((n, s) => n + s.count, 0);
        paused += judgeDestination(watch, now);
      });
    }
    return paused;
  }

  function tick(): void {
    const now = Date.now();
    if (running || now < nextRoundAt) return;
    if (outcomesSinceRound === 0 && !heldSeen && now - lastRoundAt < checkMs) return;
    lastRoundAt = now;
    running = check()
      .catch((error: unknown) => {
        // A store outage is logged once, by the engine's watch of the store, not by every loop.
        if (!isStoreOutage(error)) ctx.logger.error({ err: error }, 'reputation guard round failed');
      })
      .finally(() => {
        const ended = Date.now();
        nextRoundAt = ended + (ended - now) * ROUND_SPACING;
        running = undefined;
      });
  }

  return {
    start() {
      timer ??= setInterval(tick, syncMs);
      timer.unref?.();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
    check,
    held(projectId, mailingId, address) {
      if (!heldPauses.held(projectId, mailingId, address)) return false;
      // Deliveries held back: the next round confirms the pause (or sees it lifted) without waiting for
      // `checkMs`.
      heldSeen = true;
      return true;
    },
  };
}
