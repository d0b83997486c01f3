import { isStoreOutage, MailroomError } from '../base/errors.js';
import { SOURCE_EXPANDERS } from '../sources/index.js';
import type { SourcePage } from '../sources/source-expander.js';
import { isAudienceImport } from '../store/audience-admin-store.js';
import type { ClaimedDelivery, MailingStatus, SourceJobRecord } from '../store/records.js';
import type { DeliveryQueue, MailingStore, SourceJobStore } from '../store/store.js';
import type { DeliveryContext } from './delivery-context.js';
import type { DeliveryEvents } from './delivery-events.js';
import { createDeliveryPipeline, type RetryWait } from './delivery-pipeline.js';
import { MailingCache } from './mailing-cache.js';
import type { DrainOptions, MailroomWorker } from './worker-api.js';
import {
  type ResolvedWorkerOptions,
  resolveRenderThreads,
  WORKER_DEFAULTS,
  type WorkerOptions,
} from './worker-options.js';

/** Mailing statuses after which nothing more is sent. */
const STOPPED: readonly MailingStatus[] = ['cancelled', 'failed'];

/**
 * Pages of a source job handed to the store and not known committed yet, at most: enough for the
 * expansion of the next page never to wait for a write it could overlap (each page is about 1,000 rows
 * of records in memory until the store has prepared it).
 */
const PAGES_IN_FLIGHT = 3;

/** How long a worker expands one source job before turning to deliveries (and handing the job back). */
const SOURCE_SLICE_MS = 250;

/** Default of `DrainOptions.retryWaitMs`: a relay's restart, not its outage. */
const DEFAULT_RETRY_WAIT_MS = 30_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `drain`'s failure: what waits for a retry, the last error, and what the caller can do. */
function retriesPending(waiting: readonly RetryWait[]): MailroomError {
  const first = waiting[0] as RetryWait;
  const count = waiting.length === 1 ? '1 delivery waits' : `${waiting.length} deliveries wait`;
  const latest = waiting.reduce((a, b) => (b.nextAttemptAt > a.nextAttemptAt ? b : a));
  return new MailroomError(
    'TRANSPORT_TRANSIENT',
    `drain: ${count} for a retry after a transport failure: ${latest.error} ` +
      `(${first.address} in ${first.mailingRef}, next attempt at ${first.nextAttemptAt.toISOString()}). ` +
      'They stay queued and a running worker retries them (worker.start()); check the transport, or give ' +
      'drain({ retryWaitMs }) more time.',
  );
}

/**
 * The delivery loop: expand source jobs a page at a time, claim due deliveries with a lease, deliver
 * them (see `createDeliveryPipeline`), then settle the mailings they belong to. Several workers, in
 * one process or many, may run against one store.
 *
 * A running worker keeps at most `batchSize` deliveries claimed whose outcome is not durable yet, and
 * claims again as soon as half of that room is free, so sending never waits for a whole batch to end.
 * A crash can therefore resend at most `batchSize` deliveries per worker, each with its Message-ID.
 */
export function createWorker(
  ctx: DeliveryContext,
  options: WorkerOptions = {},
): MailroomWorker & {
  /** Deliveries claimed whose outcome is not durable yet. */ readonly outstanding: number;
} {
  const opts: ResolvedWorkerOptions = {
    ...WORKER_DEFAULTS,
    ...options,
    renderThreads: resolveRenderThreads(options.renderThreads),
  };
  const { clock, logger } = ctx;
  const events = ctx.events.view<DeliveryEvents>();
  const store: DeliveryQueue & SourceJobStore & MailingStore = ctx.store;
  const cache = new MailingCache(ctx);
  let capacity: (() => void) | undefined;
  const pipeline = createDeliveryPipeline(ctx, opts, cache, () => capacity?.());
  const batches = new Set<Promise<void>>();
  // Mailings this worker already moved to `sending`: a mailing never goes back to `queued`.
  const started = new Set<string>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  /**
   * Expand a claimed source job page after page for one time slice, then hand it back with its lease
   * ending now: deliveries interleave with a long expansion, and any worker may continue the job. Each
   * page is committed atomically with its checkpoint, so a crash resumes after the last committed page.
   */
  async function expandSources(): Promise<number> {
    const claimedAt = clock.now();
    let job = await store.claimSourceJob({ now: claimedAt, leaseMs: opts.leaseMs });
    if (!job) return 0;
    const sliceEnds = performance.now() + SOURCE_SLICE_MS;
    // The commits of the pages handed to the store and not known committed yet, oldest first.
    const inFlight: Promise<boolean>[] = [];
    // The store's own promise for the last page handed to it: the next page's `after`.
    let stored: Promise<unknown> | undefined;
    // An audience import feeds a group, not a mailing: nothing to check, settle or report a mailing of.
    const importing = isAudienceImport(job);
    try {
      // A cancelled broadcast sends nothing more: its sources stop at the next slice instead of
      // filling the store with deliveries that will never go.
      const fresh = importing ? undefined : await store.getMailingById(job.mailingId);
      if (fresh && STOPPED.includes(fresh.status)) {
        const now = clock.now();
        await store.commitSourcePage(job.id, job.leaseToken, {
          deliveries: [],
          profiles: [],
          profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve' },
          patch: { status: 'failed', error: `broadcast ${fresh.status}` },
          leaseUntil: now,
          now,
        });
        return 1;
      }
      const entry = importing ? null : await cache.get(job.mailingId);
      if (entry === undefined)
        throw new MailroomError('NOT_FOUND', `Mailing of source job ${job.id} is gone`);
      const expander = SOURCE_EXPANDERS[job.kind];
      if (!expander) throw new MailroomError('UNPROCESSABLE', `No expander for ${job.kind} sources`);
      // While one page is written, the next ones are expanded (downloaded, parsed, mapped) from the
      // job as those writes leave it, and handed to the store at once: the store prepares each while
      // the pages before it are written, and writes it only once the one before committed (`after`).
      // So pages still commit one at a time, in order, each with its checkpoint.
      for (;;) {
        const now = clock.now();
        const page = await expander.expandPage(job, { ctx, entry, now });
        while (inFlight.length >= PAGES_IN_FLIGHT) if (!(await inFlight.shift())) return 1;
        const finished = page.patch.status === 'done' || page.patch.status === 'failed';
        const sliceOver = performance.now() >= sliceEnds;
        const leaseUntil = finished || !sliceOver ? new Date(now.getTime() + opts.leaseMs) : now;
        const storing = store.commitSourcePage(
          job.id,
          job.leaseToken,
          { ...page, leaseUntil, now },
          // A page after a lost lease is fenced anyway; after a failed commit it must not be written.
          stored ? { after: stored } : undefined,
        );
        storing.catch(() => undefined);
        stored = storing;
        const commit = pageCommitted(job, entry?.mailing.ref ?? job.id, page.patch, storing);
        // Awaited later, after the pages before it: a failure (a page before it failed, so this one
        // does too, at once) must not count as unhandled meanwhile.
        commit.catch(() => undefined);
        if (finished || sliceOver) {
          // Every commit settles before the job is handed back, in order: a store may reject a page
          // before its `after` has settled (closed, or failing to prepare it), and the failure written
          // by the catch below must come after every page that does commit.
          inFlight.push(commit);
          while (inFlight.length > 0) if (!(await inFlight.shift())) return 1;
          if (finished && !importing) await settle(job.mailingId);
          return 1;
        }
        inFlight.push(commit);
        job = { ...job, ...page.patch, updatedAt: now, leaseExpiresAt: leaseUntil };
      }
    } catch (error) {
      // Commits still in flight end first: the failure is written after them, never before.
      for (const commit of inFlight) await commit.catch(() => undefined);
      // A store outage is no fault of the source: the job keeps its checkpoint and lease, and this or
      // another worker resumes it once the lease expires.
      if (isStoreOutage(error)) throw error;
      logger.error({ err: error, job: job.id }, 'source job failed');
      const now = clock.now();
      await store.commitSourcePage(job.id, job.leaseToken, {
        deliveries: [],
        profiles: [],
        profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve' },
        patch: { status: 'failed', error: error instanceof Error ? error.message : String(error) },
        leaseUntil: now,
        now,
      });
      if (!importing) await settle(job.mailingId);
      return 1;
    }
  }

  /**
   * Waits for the commit of one page of a source job (`storing`, fenced by the job's lease): false when
   * another worker took the job over (nothing was written).
   */
  async function pageCommitted(
    job: SourceJobRecord,
    mailingRef: string,
    patch: SourcePage['patch'],
    storing: Promise<{ inserted: number } | undefined>,
  ): Promise<boolean> {
    const result = await storing;
    if (!result) {
      logger.warn({ job: job.id }, 'source job lease lost; another worker continues it');
      return false;
    }
    if (events.has('source:page')) {
      events.emit('source:page', {
        projectId: job.projectId,
        mailingRef,
        kind: job.kind,
        rows: (patch.rowsDone ?? job.rowsDone) - job.rowsDone,
        failedRows: (patch.rowsFailed ?? job.rowsFailed) - job.rowsFailed,
        status: patch.status ?? job.status,
      });
    }
    return true;
  }

  async function settle(mailingId: string): Promise<void> {
    const now = clock.now();
    const entry = await cache.get(mailingId);
    // A broadcast's completion is an event for the app, written with it; a single message's is not.
    const outbox =
      entry?.mailing.kind === 'broadcast'
        ? await ctx.outbox.forMailing('broadcast.completed', entry.mailing, now)
        : undefined;
    if (await store.completeMailingIfSettled(mailingId, now, outbox)) {
      if (entry) {
        const { projectId, ref, kind } = entry.mailing;
        events.emit('broadcast:completed', { projectId, ref, kind });
      }
    }
  }

  async function deliverClaimed(claimed: ClaimedDelivery[]): Promise<void> {
    // A slow relay must not let leases lapse mid-batch: renew while the batch is in flight.
    const renew = setInterval(
      () => {
        const until = new Date(clock.now().getTime() + opts.leaseMs);
        const leases = claimed.map((d) => ({ id: d.id, leaseToken: d.leaseToken }));
        store.renewLeases(leases, until).catch((err: unknown) => {
          if (!isStoreOutage(err)) logger.warn({ err }, 'lease renewal failed');
        });
      },
      Math.max(200, opts.leaseMs / 3),
    );
    try {
      await pipeline.deliverBatch(claimed);
    } finally {
      clearInterval(renew);
    }
    for (const id of new Set(claimed.map((d) => d.mailingId))) {
      // Deliveries of this batch that a cancel raced with (a retry written back, or handed back by
      // stop) are waiting again; the cancel's own settle ran before they were, so settle them now.
      const fresh = await store.getMailingById(id);
      if (fresh && STOPPED.includes(fresh.status)) {
        await store.settleOpenDeliveries(id, 'skipped', `broadcast ${fresh.status}`, clock.now());
        continue;
      }
      if (!started.has(id)) {
        await store.setMailingStatus(id, ['queued', 'scheduled'], 'sending', clock.now());
        if (started.size >= 4096) started.clear();
        started.add(id);
      }
      await settle(id);
    }
  }

  /** Claims up to `limit` due deliveries and starts delivering them; returns the batch, if any. */
  async function claim(limit: number): Promise<{ count: number; done: Promise<void> } | undefined> {
    const claimed = await store.claimDeliveries({ now: clock.now(), limit, leaseMs: opts.leaseMs });
    if (claimed.length === 0) return undefined;
    const done = deliverClaimed(claimed).catch((error: unknown) => {
      if (isStoreOutage(error)) return;
      logger.error(
        { err: error },
        'delivering a batch failed; its deliveries are retried when their leases expire',
      );
    });
    batches.add(done);
    void done.finally(() => batches.delete(done));
    return { count: claimed.length, done };
  }

  async function runOnce(): Promise<number> {
    const sources = await expandSources();
    const batch = await claim(Math.max(1, opts.batchSize - pipeline.outstanding));
    await batch?.done;
    return sources + (batch?.count ?? 0);
  }

  /**
   * The retries this worker scheduled that still wait, soonest first. One already due while the store
   * has nothing due now was settled elsewhere (another worker, a cancel): it is forgotten.
   */
  function retriesWaiting(due: Date | undefined, now: Date): RetryWait[] {
    const nothingDue = !due || due > now;
    for (const [id, wait] of pipeline.retries) {
      if (nothingDue && wait.nextAttemptAt <= now) pipeline.retries.delete(id);
    }
    return [...pipeline.retries.values()].sort(
      (a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime(),
    );
  }

  /** Resolves when delivered outcomes free room for a claim, or after `ms`, or on `stop`. */
  function idle(ms: number, onCapacity: boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(finish, ms);
      function finish() {
        clearTimeout(timer);
        wake = undefined;
        capacity = undefined;
        resolve();
      }
      wake = finish;
      if (onCapacity)
        capacity = () => {
          if (opts.batchSize - pipeline.outstanding >= Math.ceil(opts.batchSize / 2)) finish();
        };
    });
  }

  async function runLoop(): Promise<void> {
    while (running) {
      let progressed = false;
      try {
        progressed = (await expandSources()) > 0;
        const room = opts.batchSize - pipeline.outstanding;
        if (running && room >= Math.ceil(opts.batchSize / 2)) {
          const batch = await claim(room);
          if (batch) progressed = batch.count === room;
        }
      } catch (error) {
        // An outage is logged once by the engine, not at every round.
        if (!isStoreOutage(error)) logger.error({ err: error }, 'worker round failed');
      }
      if (progressed || !running) continue;
      // Batches in flight: claim again as soon as they free room (or poll, for deliveries coming due).
      await idle(opts.pollMs, batches.size > 0);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = runLoop();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      loop = undefined;
      pipeline.halt();
      while (batches.size > 0) await Promise.all([...batches]);
      await pipeline.close();
    },
    async drain(options: DrainOptions = {}) {
      const waitUntil = performance.now() + (options.retryWaitMs ?? DEFAULT_RETRY_WAIT_MS);
      const leave = options.retries === 'leave';
      let idleRounds = 0;
      for (;;) {
        if ((await runOnce()) > 0) {
          idleRounds = 0;
          continue;
        }
        const now = clock.now();
        const due = await store.nextDueAt();
        // Due work this worker could not claim (another worker holds it): wait a little, then give up
        // rather than spin; drain means "nothing left for this worker to do now".
        if (due && due <= now && ++idleRounds <= 50) {
          await sleep(10);
          continue;
        }
        if (leave) return;
        const waiting = retriesWaiting(due, now);
        const first = waiting[0];
        if (!first) return;
        const wait = first.nextAttemptAt.getTime() - now.getTime();
        if (performance.now() + wait > waitUntil) throw retriesPending(waiting);
        idleRounds = 0;
        await sleep(Math.max(10, wait));
      }
    },
    runOnce,
    get outstanding() {
      return pipeline.outstanding;
    },
  };
}
