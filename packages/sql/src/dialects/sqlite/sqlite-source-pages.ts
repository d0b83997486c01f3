import type { Store } from '@mailroom/core';
import type { SqlContext } from '../../sql-context.js';
import type { SqliteFile } from './sqlite-database.js';
import type { PostedScript, ScriptResult, ScriptStatement } from './sqlite-thread.js';
import { deliveryStatements, JsonMemo, noBigProfilesGuard, profileStatements } from './sqlite-writes.js';

/** What `commitOnWriterThread` answers when the page is written on the event loop instead. */
export const NOT_ON_WRITER = Symbol('not on the writer thread');

/** The page `Store.commitSourcePage` commits. */
export type SourcePageCommit = Parameters<Store['commitSourcePage']>[2];

/** The SQLite file's speed path of `commitSourcePage`: large pages written by the file's background thread. */
export interface SqliteSourcePages {
  /**
   * Writes the page on the thread, or answers {@link NOT_ON_WRITER} when it is to be written on the event
   * loop (see the JSDoc of the implementation below).
   */
  commitOnWriterThread: (
    jobId: string,
    leaseToken: number,
    page: SourcePageCommit,
    update: string,
    params: unknown[],
    after: Promise<unknown> | undefined,
    slot: { id?: number },
  ) => Promise<{ inserted: number } | undefined | typeof NOT_ON_WRITER>;
  /** The thread's script of each `commitSourcePage` call that posted one (its id set once posted). */
  posted: WeakMap<Promise<unknown>, { id?: number }>;
}

/**
 * The writer-thread hand-off of source pages for one store. `writerThreadRows`: rows from which a page
 * goes to the thread (see `sqliteWriterThreadRows`; infinite when the store has no SQLite file of its own).
 */
export function createSqliteSourcePages(
  ctx: SqlContext,
  writerThreadRows: number,
  sqliteFile: (() => SqliteFile | undefined) | undefined,
): SqliteSourcePages {
  const { first } = ctx;
  /** The project of each source job seen by {@link commitOnWriterThread}. */
  const jobProjects = new Map<string, string>();
  /** The thread's script of each `commitSourcePage` call that posted one (its id set once posted). */
  const posted = new WeakMap<Promise<unknown>, { id?: number }>();

  /**
   * A source page written by the SQLite file's background thread, as one transaction there: the job's
   * update first, as the lease fence (no row changed: another worker holds the job, and nothing is
   * written), then the page's set-based statements. `slot` receives the id of the script posted, for
   * a later page's `after`. {@link NOT_ON_WRITER} when the page is small, the database is not a SQLite
   * file the store opened, or the profiles need the merge row by row (which reads as it goes): the page
   * is then written on the event loop.
   */

  const commitOnWriterThread = async (
    jobId: string,
    leaseToken: number,
    page: SourcePageCommit,
    update: string,
    params: unknown[],
    after: Promise<unknown> | undefined,
    slot: { id?: number },
  ): Promise<{ inserted: number } | undefined | typeof NOT_ON_WRITER> => {
    if (page.deliveries.length + page.profiles.length < writerThreadRows) return NOT_ON_WRITER;
    const writer = sqliteFile?.()?.writer();
    if (!writer) return NOT_ON_WRITER;
    // A job's project never changes: read outside the transaction (which the update then fences), once
    // per job, so that a page after the first reaches the thread without yielding to the event loop.
    let projectId = jobProjects.get(jobId);
    if (projectId === undefined) {
      const job = await first('SELECT project_id FROM mailroom_source_jobs WHERE id = ?', [jobId]);
      if (!job) return undefined;
      projectId = String(job.project_id);
      if (jobProjects.size >= 1024) jobProjects.clear();
      jobProjects.set(jobId, projectId);
    }
    const memo = new JsonMemo();
    const deliveries = deliveryStatements(page.deliveries, memo);
    const set =
      page.profiles.length === 0
        ? { statements: [], probe: undefined }
        : profileStatements(projectId, page.profiles, page.profileOptions, page.now.getTime(), memo);
    if (set === undefined) return NOT_ON_WRITER;
    const { statements: profiles, probe } = set;
    const script: ScriptStatement[] = [
      { text: `${update} AND lease_token = ?`, params: [...params, jobId, leaseToken], guard: true },
      ...deliveries.map(([text, params]) => ({ text, params })),
      ...profiles.map(([text, params]) => ({ text, params })),
    ];
    // A profile too big to merge in SQL (the traits cap) rolls the page back: see the result below.
    if (probe !== undefined) {
      const [text, params] = noBigProfilesGuard(jobId, projectId, probe);
      script.push({ text, params, guard: true });
    }
    // Prepared while the page before is written. If that page went to the thread too, this one follows
    // it there at once (the thread runs it only if that one committed); otherwise it waits here.
    const afterId = after === undefined ? undefined : posted.get(after)?.id;
    if (after !== undefined && afterId === undefined) await after;
    // A thread that died (it never should: out of memory on a giant page, say) hands its pages back to
    // the event loop, after the page before, as a thread that never started would. Writing a page again
    // that it had committed just before is harmless: the job's update and the profile merge give the
    // same result twice, and existing deliveries are skipped.
    const onThread = async (posted: PostedScript): Promise<ScriptResult | typeof NOT_ON_WRITER> => {
      slot.id = posted.id;
      try {
        return await posted.result;
      } catch (error) {
        if (writer.usable) throw error;
        if (after) await after;
        return NOT_ON_WRITER;
      }
    };
    let result = await onThread(writer.run(script, afterId));
    if (result !== NOT_ON_WRITER && !result.committed && result.skipped) {
      // The page before did not commit: its own outcome decides. Its failure is this page's too; after
      // a lost lease this page is fenced as well; committed on a retry, it is followed now.
      await after;
      result = await onThread(writer.run(script));
    }
    if (result === NOT_ON_WRITER) return NOT_ON_WRITER;
    // Rolled back by a guard: the lease's, or the big profiles' (the event loop's write then merges them
    // by the rule, and answers a lost lease itself).
    if (!result.committed) return probe === undefined ? undefined : NOT_ON_WRITER;
    let inserted = 0;
    for (let i = 1; i <= deliveries.length; i++) inserted += result.changes[i] ?? 0;
    return { inserted };
  };
  return { commitOnWriterThread, posted };
}
