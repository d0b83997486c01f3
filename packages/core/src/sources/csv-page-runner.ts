import type { SourceJobRecord } from '../records.js';
import type { SourceEnv, SourcePage } from './source-expander.js';

/** The lease length when a job does not tell (it always does once claimed). */
const FALLBACK_LEASE_MS = 60_000;

/**
 * Runs one source's pages back to back within one call of the worker, committing every page but the
 * last itself (fenced by the job's lease token, atomic with its checkpoint, the lease renewed each
 * time), and returns the last page for the worker to commit. Used by the CSV and audience expanders.
 *
 * Why: the worker commits a page with the lease extended and only claims a job whose lease has expired,
 * so an expander that returned after one page would wait a whole lease between pages. Crash safety is
 * unchanged: each committed page is a checkpoint, and a worker that dies mid-run leaves the job to be
 * claimed again when its lease expires, resuming after the last committed page.
 *
 * @param next computes the page after the checkpoint of the job it is given.
 */
export async function expandUntilDone(
  job: SourceJobRecord,
  env: SourceEnv,
  next: (job: SourceJobRecord, now: Date) => Promise<SourcePage>,
): Promise<SourcePage> {
  const { store, clock } = env.ctx;
  const leaseMs = leaseMsOf(job);
  let current = job;
  let now = env.now;
  for (;;) {
    const page = await next(current, now);
    if (page.patch.status === 'done' || page.patch.status === 'failed') return page;
    now = clock.now();
    const committed = await store.commitSourcePage(job.id, job.leaseToken, {
      ...page,
      leaseUntil: new Date(now.getTime() + leaseMs),
      now,
    });
    if (!committed) {
      // Another worker owns the job now; the worker's own commit of this empty page is refused too.
      return { deliveries: [], profiles: [], profileOptions: page.profileOptions, patch: {} };
    }
    current = {
      ...current,
      ...page.patch,
      updatedAt: now,
      leaseExpiresAt: new Date(now.getTime() + leaseMs),
    };
  }
}

/** The lease length a job was claimed with: a claim sets `updatedAt` to its now and the lease to now + leaseMs. */
export function leaseMsOf(job: SourceJobRecord): number {
  return job.leaseExpiresAt !== null
    ? Math.max(1, job.leaseExpiresAt.getTime() - job.updatedAt.getTime())
    : FALLBACK_LEASE_MS;
}
