import type { SourceJobRecord } from '../store/records.js';

/** The lease length when a job does not tell (it always does once claimed). */
const FALLBACK_LEASE_MS = 60_000;

/**
 * The lease length a job was claimed with: a claim, and the worker after each page, sets `updatedAt` to
 * its now and the lease to now + leaseMs. An expander that commits on its own inside a page uses it to
 * keep the lease as long as the worker's.
 */
export function leaseMsOf(job: SourceJobRecord): number {
  return job.leaseExpiresAt !== null && job.leaseExpiresAt > job.updatedAt
    ? job.leaseExpiresAt.getTime() - job.updatedAt.getTime()
    : FALLBACK_LEASE_MS;
}
