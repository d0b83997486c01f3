import { isStoreOutage, MailroomError } from '../base/errors.js';
import { yieldToEventLoop } from '../base/event-loop.js';
import { applyImportConsent } from '../consent/import-consent.js';
import { SOURCE_EXPANDERS } from '../sources/index.js';
import type { SourcePage } from '../sources/source-expander.js';
import { isAudienceImport } from '../store/audience-admin-store.js';
import type { SourceJobRecord } from '../store/records.js';
import type { DeliveryEvents } from './delivery-events.js';
import { STOPPED } from './mailing-settle.js';
import type { WorkerParts } from './worker-parts.js';

/**
 * Pages of a source job handed to the store and not known committed yet, at most: enough for the
 * expansion of the next page never to wait for a write it could overlap (each page is about 1,000 rows
 * of records in memory until the store has prepared it).
 */
const PAGES_IN_FLIGHT = 3;

/** How long a worker expands one source job before turning to deliveries (and handing the job back). */
const SOURCE_SLICE_MS = 250;

/** What {@link expandSourceSlice} uses: the worker's parts, and how to settle a mailing. */
export interface SourceSliceParts extends WorkerParts {
  /** Settles the job's mailing once the job has ended (see `MailingSettler.settle`). */
  readonly settle: (mailingId: string) => Promise<void>;
}

/**
 * Claims one source job, if one is due, and expands it page after page for one time slice, then hands it
 * back with its lease ending now: deliveries interleave with a long expansion, and any worker may continue
 * the job. Each page is committed atomically with its checkpoint, so a crash resumes after the last
 * committed page. Resolves to the jobs worked on: 0 or 1.
 */
export async function expandSourceSlice(parts: SourceSliceParts): Promise<number> {
  const { ctx, opts, store, cache, settle } = parts;
  const { clock, logger } = ctx;
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
      await endJob(parts, job, `broadcast ${fresh.status}`);
      return 1;
    }
    const entry = importing ? null : await cache.get(job.mailingId);
    if (entry === undefined) throw new MailroomError('NOT_FOUND', `Mailing of source job ${job.id} is gone`);
    const expander = SOURCE_EXPANDERS[job.kind];
    if (!expander) throw new MailroomError('UNPROCESSABLE', `No expander for ${job.kind} sources`);
    // While one page is written, the next ones are expanded (downloaded, parsed, mapped) from the
    // job as those writes leave it, and handed to the store at once: the store prepares each while
    // the pages before it are written, and writes it only once the one before committed (`after`).
    // So pages still commit one at a time, in order, each with its checkpoint.
    for (;;) {
      // A page is milliseconds of store calls that a SQLite store answers at once: without a turn of the
      // event loop between pages, a slice (and the rounds after it) would hold every HTTP request of the
      // process until the whole source was expanded (BENCHMARKS.md, topic-broadcast).
      await yieldToEventLoop();
      const now = clock.now();
      const page = await expander.expandPage(job, { ctx, entry, now });
      while (inFlight.length >= PAGES_IN_FLIGHT) if (!(await inFlight.shift())) return 1;
      const finished = page.patch.status === 'done' || page.patch.status === 'failed';
      const sliceOver = performance.now() >= sliceEnds;
      const leaseUntil = finished || !sliceOver ? new Date(now.getTime() + opts.leaseMs) : now;
      const { consent, ...pageData } = page;
      const storing = store.commitSourcePage(
        job.id,
        job.leaseToken,
        { ...pageData, leaseUntil, now },
        // A page after a lost lease is fenced anyway; after a failed commit it must not be written.
        stored ? { after: stored } : undefined,
      );
      storing.catch(() => undefined);
      stored = storing;
      const committed = pageCommitted({
        ctx,
        job,
        mailingRef: entry?.mailing.ref ?? job.id,
        patch: page.patch,
        storing,
      });
      // An import's consent columns, once its rows (their profiles) are committed.
      const { projectId } = job;
      const label = importLabel(job);
      const commit =
        importing && consent && consent.length > 0
          ? committed.then(async (ok) => {
              if (ok) await applyImportConsent(ctx, projectId, label, consent);
              return ok;
            })
          : committed;
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
    await endJob(parts, job, error instanceof Error ? error.message : String(error));
    if (!importing) await settle(job.mailingId);
    return 1;
  }
}

/** Marks the job `failed` with `error` and hands it back (its lease ends now), writing no rows. */
async function endJob({ ctx, store }: WorkerParts, job: SourceJobRecord, error: string): Promise<void> {
  const now = ctx.clock.now();
  await store.commitSourcePage(job.id, job.leaseToken, {
    deliveries: [],
    profiles: [],
    profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve' },
    patch: { status: 'failed', error },
    leaseUntil: now,
    now,
  });
}

/** One page of a source job handed to the store: what {@link pageCommitted} waits for and reports. */
interface PageCommit {
  readonly ctx: WorkerParts['ctx'];
  /** The job as it was before this page. */
  readonly job: SourceJobRecord;
  /** The ref of the job's mailing (the job's own id for an audience import), for `source:page`. */
  readonly mailingRef: string;
  /** What this page changes of the job. */
  readonly patch: SourcePage['patch'];
  /** The store's commit of the page, fenced by the job's lease: undefined when the lease was lost. */
  readonly storing: Promise<{ inserted: number; skippedTraits?: number } | undefined>;
}

/**
 * Waits for the commit of one page of a source job and emits `source:page`: false when another worker
 * took the job over (nothing was written).
 */
async function pageCommitted({ ctx, job, mailingRef, patch, storing }: PageCommit): Promise<boolean> {
  const result = await storing;
  if (!result) {
    ctx.logger.warn({ job: job.id }, 'source job lease lost; another worker continues it');
    return false;
  }
  if (result.skippedTraits) {
    // The traits cap held: the profiles keep what they had, and the operator learns what was left out.
    ctx.logger.warn(
      { job: job.id, projectId: job.projectId, skippedTraits: result.skippedTraits },
      'source page: traits past the profile traits cap (1,000 keys, 64 KiB) were not stored',
    );
  }
  const events = ctx.events.view<DeliveryEvents>();
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

/** The label of an import (its config's), for its consent records' source `import:<label>`. */
function importLabel(job: SourceJobRecord): string {
  const label = (job.config as { label?: unknown } | null)?.label;
  return typeof label === 'string' ? label : job.id;
}
