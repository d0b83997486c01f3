import type { SourceJobStore } from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { byCreatedAt } from '../memory-state.js';
import { insertDeliveries, upsertProfiles } from '../memory-writes.js';

/** `SourceJobStore` in memory. Source jobs: their claims and their pages; every method checks and writes within one synchronous run. */
export function memorySourceJobStore(db: () => State): SourceJobStore {
  return {
    async claimSourceJob({ now, leaseMs }) {
      const t = now.getTime();
      const job = [...db().sourceJobs.values()]
        .filter(
          (j) =>
            j.status === 'pending' ||
            (j.status === 'running' && (j.leaseExpiresAt === null || j.leaseExpiresAt.getTime() <= t)),
        )
        .sort((a, b) => byCreatedAt(a, b))[0];
      if (!job) return undefined;
      job.status = 'running';
      job.leaseExpiresAt = new Date(t + leaseMs);
      job.leaseToken += 1;
      job.updatedAt = new Date(t);
      return clone(job);
    },
    async commitSourcePage(jobId, leaseToken, page, options) {
      if (options?.after) await options.after;
      const s = db();
      const job = s.sourceJobs.get(jobId);
      if (!job || job.leaseToken !== leaseToken) return undefined;
      const inserted = insertDeliveries(s, page.deliveries);
      const skippedTraits = upsertProfiles(s, job.projectId, page.profiles, page.profileOptions, page.now);
      Object.assign(job, clone(page.patch));
      job.leaseExpiresAt = new Date(page.leaseUntil);
      job.updatedAt = new Date(page.now);
      return skippedTraits > 0 ? { inserted, skippedTraits } : { inserted };
    },
    async listSourceJobs(mailingId) {
      const rows = [...db().sourceJobs.values()].filter((j) => j.mailingId === mailingId);
      return clone(rows.sort(byCreatedAt));
    },
  };
}
