import type { SourceJobStore } from '@mailroom/core';
import type { SqliteSourcePages } from '../dialects/sqlite/sqlite-source-pages.js';
import { NOT_ON_WRITER } from '../dialects/sqlite/sqlite-source-pages.js';
import { JsonMemo } from '../dialects/sqlite/sqlite-writes.js';
import { SOURCE_JOB_COLUMNS } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';

/** `SourceJobStore` on SQL. Source jobs: their claims and their pages. On a SQLite file, large pages go to its background thread (`dialects/sqlite/sqlite-source-pages.ts`). */
export function sqlSourceJobStore(ctx: SqlContext, sqlitePages: SqliteSourcePages): SourceJobStore {
  const { db, runner, codec, bulk, claims, guard, all, first, write } = ctx;
  const { commitOnWriterThread, posted } = sqlitePages;

  return {
    claimSourceJob(jobOptions) {
      return guard('claimSourceJob', async () => {
        const now = jobOptions.now.getTime();
        const [job] = await claims.claim(db, {
          table: 'mailroom_source_jobs',
          due: "(d.status = 'pending' OR (d.status = 'running' AND d.lease_expires_at <= ?)) ORDER BY d.created_at, d.id",
          dueParams: [now],
          limit: 1,
          set: "status = 'running', lease_expires_at = ?, lease_token = lease_token + 1, updated_at = ?",
          setParams: [now + jobOptions.leaseMs, now],
          columns: SOURCE_JOB_COLUMNS,
          decode: codec.sourceJob,
        });
        return job;
      });
    },

    commitSourcePage(jobId, leaseToken, page, options) {
      const slot: { id?: number } = {};
      const committing = guard('commitSourcePage', async () => {
        const sets = ['lease_expires_at = ?', 'updated_at = ?'];
        const params: unknown[] = [page.leaseUntil.getTime(), page.now.getTime()];
        const set = (column: string, value: unknown) => {
          sets.push(`${column} = ?`);
          params.push(value);
        };
        const { patch } = page;
        if (patch.status !== undefined) set('status', patch.status);
        if (patch.checkpoint !== undefined) set('checkpoint', codec.json(patch.checkpoint));
        if (patch.rowsDone !== undefined) set('rows_done', patch.rowsDone);
        if (patch.rowsFailed !== undefined) set('rows_failed', patch.rowsFailed);
        if (patch.rowErrors !== undefined) set('row_errors', codec.json(patch.rowErrors));
        if (patch.error !== undefined) set('error', patch.error);
        const update = `UPDATE mailroom_source_jobs SET ${sets.join(', ')} WHERE id = ?`;
        const after = options?.after;
        const onWriter = await commitOnWriterThread(jobId, leaseToken, page, update, params, after, slot);
        if (onWriter !== NOT_ON_WRITER) return onWriter;
        if (after) await after;
        return runner.transaction(db, async (tx) => {
          const job = await first(
            `SELECT project_id FROM mailroom_source_jobs WHERE id = ? AND lease_token = ?${runner.forUpdate}`,
            [jobId, leaseToken],
            tx,
          );
          if (!job) return undefined;
          const memo = new JsonMemo();
          const inserted = await bulk.insertDeliveries(tx, page.deliveries, memo);
          let skippedTraits = 0;
          if (page.profiles.length > 0) {
            skippedTraits = await bulk.upsertProfiles(
              tx,
              String(job.project_id),
              page.profiles,
              page.profileOptions,
              page.now,
              memo,
            );
          }
          await write(update, [...params, jobId], tx);
          return skippedTraits > 0 ? { inserted, skippedTraits } : { inserted };
        });
      });
      posted.set(committing, slot);
      return committing;
    },

    listSourceJobs(mailingId) {
      return guard('listSourceJobs', async () =>
        (
          await all('SELECT * FROM mailroom_source_jobs WHERE mailing_id = ? ORDER BY created_at, id', [
            mailingId,
          ])
        ).map(codec.sourceJob),
      );
    },
  };
}
