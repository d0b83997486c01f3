import type {
  BatchCommitResult,
  ClaimedDelivery,
  DeliveryCounts,
  DeliveryRecord,
  IdempotencyRecord,
  MailingRecord,
  SourceJobRecord,
  Store,
} from '@mailroom/core';
import { DELIVERY_STATUSES, MailroomError } from '@mailroom/core';
import { createBulkWrites } from './bulk-writes.js';
import type { Row } from './codec.js';
import {
  createCodec,
  DELIVERY_COLUMNS,
  DELIVERY_JSON_COLUMNS,
  MAILING_COLUMNS,
  SOURCE_JOB_COLUMNS,
} from './codec.js';
import { createCompletionBatcher } from './completion-batcher.js';
import type { Db } from './connect.js';
import { connect } from './connect.js';
import { runMigrations } from './migrations.js';
import type { SqlKind, SqlStoreOptions } from './options.js';
import { pgCommitBatch } from './postgres-statements.js';
import { createSqlClaims } from './sql-claims.js';
import { toStoreError } from './sql-errors.js';
import { sqlInbound } from './sql-inbound.js';
import { createSqlRunner } from './sql-runner.js';
import type { PostedScript, ScriptResult, ScriptStatement } from './sqlite-thread.js';
import { deliveryStatements, JsonMemo, profileStatements } from './sqlite-writes.js';

/** What `commitOnWriterThread` answers when the page is written on the event loop instead. */
const NOT_ON_WRITER = Symbol('not on the writer thread');

/** The page `Store.commitSourcePage` commits. */
type SourcePageCommit = Parameters<Store['commitSourcePage']>[2];

/** Mailing statuses whose deliveries are never claimed (a scheduled mailing's are due by time alone). */
const BLOCKED_MAILINGS = `('cancelled', 'failed')`;
/**
 * The claim condition that `d` is not a delivery of a blocked mailing. PostgreSQL and SQLite get a
 * `NOT IN` over the (few) blocked mailings, which they run once as a hashed filter while walking the due
 * index in order; as an anti-join, PostgreSQL misjudges its size and sorts every due row instead. MySQL,
 * whose claim is pinned to the due index, checks each candidate's mailing by primary key.
 */
const notBlocked = (kind: SqlKind): string =>
  kind === 'mysql'
    ? `NOT EXISTS (SELECT 1 FROM mailroom_mailings m WHERE m.id = d.mailing_id AND m.status IN ${BLOCKED_MAILINGS})`
    : `d.mailing_id NOT IN (SELECT m.id FROM mailroom_mailings m WHERE m.status IN ${BLOCKED_MAILINGS})`;

/** Keys per `IN (...)` list. */
const IN_LIST_SIZE = 500;

/**
 * A `Store` on SQL through Kysely: SQLite (better-sqlite3, the embedded default), PostgreSQL (pg) and
 * MySQL/MariaDB (mysql2). Call `init()` once to apply the migrations. Deliveries are claimed with
 * `FOR UPDATE SKIP LOCKED` on PostgreSQL and MySQL, in one write transaction on SQLite, so any number
 * of worker processes may share one database.
 *
 * @example
 * const store = sqlStore({ url: 'sqlite:.mailroom/mailroom.db' });
 * await store.init();
 */
export function sqlStore<DB = unknown>(options: SqlStoreOptions<DB>): Store {
  const { db, kind, release, sqliteFile, pgPrepare, pgPool } = connect(options as SqlStoreOptions);
  const name = `sql:${kind}`;
  const r = createSqlRunner(kind, { root: db, sqliteFile, pgPrepare, pgPool });
  const c = createCodec(kind);
  const bulk = createBulkWrites(r, c);
  const claims = createSqlClaims(r, c);
  const completions = createCompletionBatcher(db, r, claims, c);
  const mysql = kind === 'mysql';
  const notBlockedSql = notBlocked(kind);
  const mailingColumns = MAILING_COLUMNS.join(', ');
  const sourceJobColumns = SOURCE_JOB_COLUMNS.join(', ');
  let migrated: Promise<void> | undefined;
  let closed = false;

  /**
   * Runs one operation: refused once closed, retried when it failed for contention alone, and with any
   * error turned into the store's `MailroomError`. `retry: false` for operations whose parts commit on
   * their own (a retry would report a part written by the first attempt as not written).
   */
  const guard = async <T>(operation: string, fn: () => Promise<T>, retry = true): Promise<T> => {
    if (closed)
      throw new MailroomError('STORE_FAILED', `${operation}: the store is closed`, { source: name });
    try {
      return await (retry ? r.retrying(fn) : fn());
    } catch (error) {
      throw toStoreError(error, name, operation);
    }
  };
  /** Rows from which a source page goes to the SQLite writer thread (see `sqliteWriterThreadRows`). */
  const writerThreadRows =
    kind === 'sqlite' && 'url' in options
      ? Math.max(1, options.sqliteWriterThreadRows ?? 1024)
      : Number.POSITIVE_INFINITY;

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
    const profiles =
      page.profiles.length === 0
        ? []
        : profileStatements(projectId, page.profiles, page.profileOptions, page.now.getTime(), memo);
    if (profiles === undefined) return NOT_ON_WRITER;
    const script: ScriptStatement[] = [
      { text: `${update} AND lease_token = ?`, params: [...params, jobId, leaseToken], guard: true },
      ...deliveries.map(([text, params]) => ({ text, params })),
      ...profiles.map(([text, params]) => ({ text, params })),
    ];
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
    if (!result.committed) return undefined;
    let inserted = 0;
    for (let i = 1; i <= deliveries.length; i++) inserted += result.changes[i] ?? 0;
    return { inserted };
  };
  const all = async (text: string, params: unknown[] = [], on: Db = db): Promise<Row[]> =>
    (await r.run<Row>(on, text, params)).rows;
  const first = async (text: string, params: unknown[] = [], on: Db = db): Promise<Row | undefined> =>
    (await r.run<Row>(on, text, params)).rows[0];
  const write = async (text: string, params: unknown[] = [], on: Db = db): Promise<number> =>
    (await r.run(on, text, params)).affected;
  /** `INSERT ... ON CONFLICT (key) DO UPDATE` that replaces every column, or MySQL's equivalent. */
  const upsertAll = (table: string, columns: readonly string[], key: string): string => {
    const head = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${r.values(1, columns.length)}`;
    return mysql
      ? `${head} ON DUPLICATE KEY UPDATE ${columns.map((col) => `${col} = VALUES(${col})`).join(', ')}`
      : `${head} ON CONFLICT (${key}) DO UPDATE SET ${columns.map((col) => `${col} = excluded.${col}`).join(', ')}`;
  };
  const pageAfter = (after: string | null | undefined, column: string): [string, unknown[]] =>
    after === undefined || after === null ? ['', []] : [` AND ${column} > ?`, [after]];

  const getMailingRow = (id: string) => first('SELECT * FROM mailroom_mailings WHERE id = ?', [id]);
  const insertMailing = (tx: Db, mailing: MailingRecord) =>
    write(
      `INSERT INTO mailroom_mailings (${mailingColumns}) VALUES ${r.values(1, MAILING_COLUMNS.length)}`,
      c.mailingParams(mailing),
      tx,
    );
  const insertSourceJobs = async (tx: Db, jobs: readonly SourceJobRecord[]) => {
    for (const chunk of r.chunk(jobs.map(c.sourceJobParams), SOURCE_JOB_COLUMNS.length)) {
      await write(
        `INSERT INTO mailroom_source_jobs (${sourceJobColumns}) VALUES ${r.values(chunk.length, SOURCE_JOB_COLUMNS.length)}`,
        chunk.flat(),
        tx,
      );
    }
  };

  const store: Store = {
    name,
    capabilities: { multiProcess: true },
    ...sqlInbound(db, r, guard),

    init() {
      return guard('init', async () => {
        migrated ??= runMigrations(db, kind).catch((error: unknown) => {
          migrated = undefined;
          throw error;
        });
        await migrated;
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      await completions.drain();
      await release();
    },

    // Projects and secrets

    createProject(project, secret) {
      return guard('createProject', () =>
        r.transaction(db, async (tx) => {
          await write(
            'INSERT INTO mailroom_projects (id, name, created_at) VALUES (?, ?, ?)',
            [project.id, project.name, project.createdAt.getTime()],
            tx,
          );
          await write(
            'INSERT INTO mailroom_project_secrets (hash, project_id, mode, created_at) VALUES (?, ?, ?, ?)',
            [secret.hash, secret.projectId, secret.mode, secret.createdAt.getTime()],
            tx,
          );
        }),
      );
    },

    addProjectSecret(secret) {
      return guard('addProjectSecret', async () => {
        await write(
          'INSERT INTO mailroom_project_secrets (hash, project_id, mode, created_at) VALUES (?, ?, ?, ?)',
          [secret.hash, secret.projectId, secret.mode, secret.createdAt.getTime()],
        );
      });
    },

    findSecret(hash) {
      return guard('findSecret', async () => {
        const row = await first(
          `SELECT s.hash, s.project_id, s.mode, s.created_at, p.name AS project_name, p.created_at AS project_created_at
           FROM mailroom_project_secrets s JOIN mailroom_projects p ON p.id = s.project_id WHERE s.hash = ?`,
          [hash],
        );
        if (!row) return undefined;
        return {
          secret: c.secret(row),
          project: c.project({
            id: row.project_id,
            name: row.project_name,
            created_at: row.project_created_at,
          }),
        };
      });
    },

    getProject(id) {
      return guard('getProject', async () => {
        const row = await first('SELECT * FROM mailroom_projects WHERE id = ?', [id]);
        return row && c.project(row);
      });
    },

    listProjects() {
      return guard('listProjects', async () =>
        (await all('SELECT * FROM mailroom_projects ORDER BY created_at, id')).map(c.project),
      );
    },

    // Sender identities

    addSender(sender) {
      return guard('addSender', async () => {
        await write(
          'INSERT INTO mailroom_senders (id, project_id, address, name, dkim, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          [
            sender.id,
            sender.projectId,
            sender.address,
            sender.name,
            c.json(sender.dkim),
            sender.createdAt.getTime(),
          ],
        );
      });
    },

    findSender(projectId, address) {
      return guard('findSender', async () => {
        const row = await first('SELECT * FROM mailroom_senders WHERE project_id = ? AND address = ?', [
          projectId,
          address,
        ]);
        return row && c.sender(row);
      });
    },

    listSenders(projectId) {
      return guard('listSenders', async () =>
        (await all('SELECT * FROM mailroom_senders WHERE project_id = ? ORDER BY address', [projectId])).map(
          c.sender,
        ),
      );
    },

    // Templates

    putTemplate(template) {
      return guard('putTemplate', async () => {
        const columns = [
          'id',
          'project_id',
          'ref',
          'format',
          'subject',
          'source',
          'compiled',
          'version',
          'created_at',
          'updated_at',
        ];
        await write(upsertAll('mailroom_templates', columns, 'project_id, ref'), [
          template.id,
          template.projectId,
          template.ref,
          template.format,
          template.subject,
          template.source,
          template.compiled,
          template.version,
          template.createdAt.getTime(),
          template.updatedAt.getTime(),
        ]);
      });
    },

    getTemplate(projectId, ref) {
      return guard('getTemplate', async () => {
        const row = await first('SELECT * FROM mailroom_templates WHERE project_id = ? AND ref = ?', [
          projectId,
          ref,
        ]);
        return row && c.template(row);
      });
    },

    listTemplates(projectId) {
      return guard('listTemplates', async () =>
        (await all('SELECT * FROM mailroom_templates WHERE project_id = ? ORDER BY ref', [projectId])).map(
          c.template,
        ),
      );
    },

    // Audience

    createGroup(group) {
      return guard('createGroup', async () => {
        await write(
          'INSERT INTO mailroom_groups (id, project_id, ref, name, created_at) VALUES (?, ?, ?, ?, ?)',
          [group.id, group.projectId, group.ref, group.name, group.createdAt.getTime()],
        );
      });
    },

    getGroup(projectId, ref) {
      return guard('getGroup', async () => {
        const row = await first('SELECT * FROM mailroom_groups WHERE project_id = ? AND ref = ?', [
          projectId,
          ref,
        ]);
        return row && c.group(row);
      });
    },

    listGroups(projectId) {
      return guard('listGroups', async () => {
        const rows = await all(
          `SELECT g.*, (SELECT COUNT(*) FROM mailroom_group_members gm WHERE gm.group_id = g.id) AS members
           FROM mailroom_groups g WHERE g.project_id = ? ORDER BY g.ref`,
          [projectId],
        );
        return rows.map((row) => ({ ...c.group(row), members: Number(row.members) }));
      });
    },

    upsertProfiles(projectId, rows, options, now) {
      return guard('upsertProfiles', async () => {
        if (rows.length === 0 && !options.groupId) return;
        await r.transaction(db, (tx) => bulk.upsertProfiles(tx, projectId, rows, options, now));
      });
    },

    getProfile(projectId, address) {
      return guard('getProfile', async () => {
        const row = await first('SELECT * FROM mailroom_profiles WHERE project_id = ? AND address = ?', [
          projectId,
          address,
        ]);
        return row && c.profile(row);
      });
    },

    findProfiles(projectId, addresses) {
      return guard('findProfiles', async () => {
        const unique = [...new Set(addresses)];
        const found = [];
        for (let i = 0; i < unique.length; i += IN_LIST_SIZE) {
          const slice = unique.slice(i, i + IN_LIST_SIZE);
          const rows = await all(
            `SELECT * FROM mailroom_profiles WHERE project_id = ? AND address IN ${r.values(1, slice.length)}`,
            [projectId, ...slice],
          );
          found.push(...rows.map(c.profile));
        }
        return found;
      });
    },

    setProfileStatus(projectId, address, status, now) {
      return guard('setProfileStatus', async () => {
        const head =
          'INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at) VALUES (?, ?, NULL, ?, ?, ?, ?, ?)';
        const text = mysql
          ? `${head} ON DUPLICATE KEY UPDATE status = VALUES(status), updated_at = VALUES(updated_at)`
          : `${head} ON CONFLICT (project_id, address) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at`;
        await write(text, [projectId, address, '{}', status, '[]', now.getTime(), now.getTime()]);
      });
    },

    listGroupMembers(projectId, groupId, page) {
      return guard('listGroupMembers', async () => {
        const [after, afterParams] = pageAfter(page.after, 'gm.address');
        const rows = await all(
          `SELECT p.* FROM mailroom_group_members gm
           JOIN mailroom_profiles p ON p.project_id = gm.project_id AND p.address = gm.address
           WHERE gm.group_id = ? AND gm.project_id = ?${after} ORDER BY gm.address LIMIT ?`,
          [groupId, projectId, ...afterParams, page.limit],
        );
        return rows.map(c.profile);
      });
    },

    // Suppression

    addSuppression(suppression) {
      return guard('addSuppression', async () => {
        await write(
          upsertAll(
            'mailroom_suppressions',
            ['project_id', 'address', 'reason', 'detail', 'created_at'],
            'project_id, address',
          ),
          [
            suppression.projectId,
            suppression.address,
            suppression.reason,
            suppression.detail,
            suppression.createdAt.getTime(),
          ],
        );
      });
    },

    removeSuppression(projectId, address) {
      return guard('removeSuppression', async () => {
        const removed = await write(
          'DELETE FROM mailroom_suppressions WHERE project_id = ? AND address = ?',
          [projectId, address],
        );
        return removed > 0;
      });
    },

    findSuppressed(projectId, addresses) {
      return guard('findSuppressed', async () => {
        const unique = [...new Set(addresses)];
        const found = [];
        for (let i = 0; i < unique.length; i += IN_LIST_SIZE) {
          const slice = unique.slice(i, i + IN_LIST_SIZE);
          const rows = await all(
            `SELECT * FROM mailroom_suppressions WHERE project_id = ? AND address IN ${r.values(1, slice.length)}`,
            [projectId, ...slice],
          );
          found.push(...rows.map(c.suppression));
        }
        return found;
      });
    },

    // Mailings, batches and deliveries

    commitBatch(batchWrite) {
      const single = kind === 'postgres' ? pgCommitBatch(c, batchWrite) : undefined;
      if (single) {
        return guard('commitBatch', async (): Promise<BatchCommitResult> => {
          const [row] = (await r.run<Row>(db, single.text, single.params, true)).rows;
          const { target, now } = batchWrite;
          if (!row) {
            // Nothing was written: say why.
            const found = 'mailingId' in target ? await getMailingRow(target.mailingId) : undefined;
            if (!found)
              throw new MailroomError('NOT_FOUND', 'commitBatch: the mailing does not exist', {
                source: name,
              });
            throw new MailroomError(
              'BROADCAST_CLOSED',
              `commitBatch: the mailing is ${String(found.status)}`,
              {
                source: name,
              },
            );
          }
          const inserted = Number(row.mailroom_inserted);
          if ('create' in target) {
            // A copy: the caller may mutate its record after the write.
            const mailing = {
              ...structuredClone(target.create),
              batchCount: target.create.batchCount + 1,
              updatedAt: now,
            };
            return { inserted, mailing };
          }
          return { inserted, mailing: c.mailing(row) };
        });
      }
      return guard('commitBatch', () =>
        r.transaction(db, async (tx): Promise<BatchCommitResult> => {
          const { target, batch, now } = batchWrite;
          let mailing: MailingRecord;
          if ('create' in target) {
            // A copy: the caller may mutate its record after the write.
            mailing = {
              ...structuredClone(target.create),
              batchCount: target.create.batchCount + 1,
              updatedAt: now,
            };
            await insertMailing(tx, mailing);
          } else {
            // The row lock orders this commit against setMailingStatus and completeMailingIfSettled.
            const row = await first(
              `SELECT * FROM mailroom_mailings WHERE id = ?${r.forUpdate}`,
              [target.mailingId],
              tx,
            );
            if (!row)
              throw new MailroomError('NOT_FOUND', 'commitBatch: the mailing does not exist', {
                source: name,
              });
            const current = c.mailing(row);
            if (!target.allowStatus.includes(current.status)) {
              throw new MailroomError('BROADCAST_CLOSED', `commitBatch: the mailing is ${current.status}`, {
                source: name,
              });
            }
            await write(
              'UPDATE mailroom_mailings SET status = ?, batch_count = batch_count + 1, updated_at = ? WHERE id = ?',
              [target.setStatus, now.getTime(), current.id],
              tx,
            );
            mailing = {
              ...current,
              status: target.setStatus,
              batchCount: current.batchCount + 1,
              updatedAt: now,
            };
          }
          await write(
            'INSERT INTO mailroom_batches (id, mailing_id, seq, recipient_count, created_at) VALUES (?, ?, ?, ?, ?)',
            [batch.id, batch.mailingId, batch.seq, batch.recipientCount, batch.createdAt.getTime()],
            tx,
          );
          const memo = new JsonMemo();
          const inserted = await bulk.insertDeliveries(tx, batchWrite.deliveries, memo);
          if (batchWrite.profiles.length > 0) {
            await bulk.upsertProfiles(
              tx,
              mailing.projectId,
              batchWrite.profiles,
              batchWrite.profileOptions,
              now,
              memo,
            );
          }
          await insertSourceJobs(tx, batchWrite.sourceJobs);
          return { inserted, mailing };
        }),
      );
    },

    getMailing(projectId, ref) {
      return guard('getMailing', async () => {
        const row = await first('SELECT * FROM mailroom_mailings WHERE project_id = ? AND ref = ?', [
          projectId,
          ref,
        ]);
        return row && c.mailing(row);
      });
    },

    getMailingById(id) {
      return guard('getMailingById', async () => {
        const row = await first('SELECT * FROM mailroom_mailings WHERE id = ?', [id]);
        return row && c.mailing(row);
      });
    },

    listMailings(projectId, mailingKind, page) {
      return guard('listMailings', async () => {
        let cursor = '';
        const params: unknown[] = [projectId, mailingKind];
        if (page.after !== undefined && page.after !== null) {
          const at = await first('SELECT created_at FROM mailroom_mailings WHERE id = ? AND project_id = ?', [
            page.after,
            projectId,
          ]);
          if (!at) return [];
          cursor = ' AND (created_at < ? OR (created_at = ? AND id < ?))';
          params.push(Number(at.created_at), Number(at.created_at), page.after);
        }
        params.push(page.limit);
        const rows = await all(
          `SELECT * FROM mailroom_mailings WHERE project_id = ? AND kind = ?${cursor} ORDER BY created_at DESC, id DESC LIMIT ?`,
          params,
        );
        return rows.map(c.mailing);
      });
    },

    setMailingStatus(id, from, to, now) {
      return guard('setMailingStatus', async () => {
        if (from.length === 0) return false;
        const changed = await write(
          `UPDATE mailroom_mailings SET status = ?, updated_at = ? WHERE id = ? AND status IN ${r.values(1, from.length)}`,
          [to, now.getTime(), id, ...from],
        );
        return changed > 0;
      });
    },

    completeMailingIfSettled(id, now) {
      return guard('completeMailingIfSettled', () =>
        r.transaction(db, async (tx) => {
          // Locking the mailing first serializes this check with commitBatch, which locks it too.
          const mailing = await first(
            `SELECT status FROM mailroom_mailings WHERE id = ?${r.forUpdate}`,
            [id],
            tx,
          );
          if (!mailing || (mailing.status !== 'queued' && mailing.status !== 'sending')) return false;
          const open = await first(
            `SELECT 1 AS open FROM mailroom_deliveries WHERE mailing_id = ? AND status IN ('queued', 'sending') LIMIT 1`,
            [id],
            tx,
          );
          if (open) return false;
          const running = await first(
            `SELECT 1 AS running FROM mailroom_source_jobs WHERE mailing_id = ? AND status IN ('pending', 'running') LIMIT 1`,
            [id],
            tx,
          );
          if (running) return false;
          await write(
            "UPDATE mailroom_mailings SET status = 'completed', updated_at = ? WHERE id = ?",
            [now.getTime(), id],
            tx,
          );
          return true;
        }),
      );
    },

    claimDeliveries(claimOptions) {
      return guard('claimDeliveries', async () => {
        if (claimOptions.limit <= 0) return [];
        const now = claimOptions.now.getTime();
        const until = now + claimOptions.leaseMs;
        const due = mysql
          ? `d.open_at <= ? AND (d.status = 'queued' OR d.lease_expires_at <= ?) AND ${notBlockedSql} ORDER BY d.open_at`
          : `d.status IN ('queued', 'sending') AND d.next_attempt_at <= ? AND (d.status = 'queued' OR d.lease_expires_at <= ?) AND ${notBlockedSql} ORDER BY d.next_attempt_at`;
        const claimed = (await claims.claim(db, {
          table: 'mailroom_deliveries',
          due,
          dueParams: [now, now],
          limit: claimOptions.limit,
          mysqlIndex: 'mailroom_deliveries_due',
          set: "status = 'sending', lease_expires_at = ?, lease_token = lease_token + 1, attempts = attempts + 1, updated_at = ?",
          setParams: [until, now],
          columns: DELIVERY_COLUMNS,
          decode: c.delivery,
          decodeValues: c.deliveryValues,
          jsonColumns: DELIVERY_JSON_COLUMNS,
          rememberRowids: true,
        })) as ClaimedDelivery[];
        return claimed.sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime());
      });
    },

    renewLeases(leases, until) {
      return guard('renewLeases', async () => {
        const renewed: string[] = [];
        for (let i = 0; i < leases.length; i += IN_LIST_SIZE) {
          renewed.push(...(await claims.renew(db, leases.slice(i, i + IN_LIST_SIZE), until.getTime())));
        }
        return renewed;
      });
    },

    completeDelivery(id, leaseToken, outcome) {
      return guard('completeDelivery', () => completions.complete(id, leaseToken, outcome));
    },

    completeDeliveries(items) {
      // Queued together, they are written in one group (a repeated id waits for the next group).
      return guard('completeDeliveries', () => completions.completeMany(items), false);
    },

    getDelivery(id) {
      return guard('getDelivery', async () => {
        const row = await first('SELECT * FROM mailroom_deliveries WHERE id = ?', [id]);
        return row && c.delivery(row);
      });
    },

    findDelivery(mailingId, address) {
      return guard('findDelivery', async () => {
        const row = await first('SELECT * FROM mailroom_deliveries WHERE mailing_id = ? AND address = ?', [
          mailingId,
          address,
        ]);
        return row && c.delivery(row);
      });
    },

    listDeliveries(mailingId, page) {
      return guard('listDeliveries', async (): Promise<DeliveryRecord[]> => {
        const [after, afterParams] = pageAfter(page.after, 'address');
        const [status, statusParams] = page.status ? [' AND status = ?', [page.status]] : ['', []];
        const rows = await all(
          `SELECT * FROM mailroom_deliveries WHERE mailing_id = ?${status}${after} ORDER BY address LIMIT ?`,
          [mailingId, ...statusParams, ...afterParams, page.limit],
        );
        return rows.map(c.delivery);
      });
    },

    countDeliveries(mailingId) {
      return guard('countDeliveries', async () => {
        const counts = Object.fromEntries(DELIVERY_STATUSES.map((st) => [st, 0])) as DeliveryCounts;
        const rows = await all(
          'SELECT status, COUNT(*) AS n FROM mailroom_deliveries WHERE mailing_id = ? GROUP BY status',
          [mailingId],
        );
        for (const row of rows) counts[String(row.status) as keyof DeliveryCounts] = Number(row.n);
        return counts;
      });
    },

    settleOpenDeliveries(mailingId, status, reason, now) {
      return guard('settleOpenDeliveries', () =>
        write(
          `UPDATE mailroom_deliveries SET status = ?, last_error = ?, lease_expires_at = NULL, updated_at = ?
           WHERE mailing_id = ? AND (status = 'queued' OR (status = 'sending' AND lease_expires_at <= ?))`,
          [status, reason, now.getTime(), mailingId, now.getTime()],
        ),
      );
    },

    nextDueAt() {
      return guard('nextDueAt', async () => {
        const [row] = await claims.inDueOrder<Row>(
          db,
          mysql
            ? `SELECT d.next_attempt_at FROM mailroom_deliveries d WHERE d.open_at IS NOT NULL AND d.status = 'queued' AND ${notBlockedSql} ORDER BY d.open_at LIMIT 1`
            : `SELECT d.next_attempt_at FROM mailroom_deliveries d WHERE d.status IN ('queued', 'sending') AND d.status = 'queued' AND ${notBlockedSql} ORDER BY d.next_attempt_at LIMIT 1`,
          [],
        );
        return row ? new Date(Number(row.next_attempt_at)) : undefined;
      });
    },

    // Source jobs

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
          decode: c.sourceJob,
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
        if (patch.checkpoint !== undefined) set('checkpoint', c.json(patch.checkpoint));
        if (patch.rowsDone !== undefined) set('rows_done', patch.rowsDone);
        if (patch.rowsFailed !== undefined) set('rows_failed', patch.rowsFailed);
        if (patch.rowErrors !== undefined) set('row_errors', c.json(patch.rowErrors));
        if (patch.error !== undefined) set('error', patch.error);
        const update = `UPDATE mailroom_source_jobs SET ${sets.join(', ')} WHERE id = ?`;
        const after = options?.after;
        const onWriter = await commitOnWriterThread(jobId, leaseToken, page, update, params, after, slot);
        if (onWriter !== NOT_ON_WRITER) return onWriter;
        if (after) await after;
        return r.transaction(db, async (tx) => {
          const job = await first(
            `SELECT project_id FROM mailroom_source_jobs WHERE id = ? AND lease_token = ?${r.forUpdate}`,
            [jobId, leaseToken],
            tx,
          );
          if (!job) return undefined;
          const memo = new JsonMemo();
          const inserted = await bulk.insertDeliveries(tx, page.deliveries, memo);
          if (page.profiles.length > 0) {
            await bulk.upsertProfiles(
              tx,
              String(job.project_id),
              page.profiles,
              page.profileOptions,
              page.now,
              memo,
            );
          }
          await write(update, [...params, jobId], tx);
          return { inserted };
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
        ).map(c.sourceJob),
      );
    },

    // Idempotency

    beginIdempotent(record, now) {
      return guard('beginIdempotent', () =>
        r.transaction(
          db,
          async (tx): Promise<{ created: true } | { created: false; existing: IdempotencyRecord }> => {
            const columns = 'project_id, idem_key, request_hash, state, response, created_at, expires_at';
            const values = [
              record.projectId,
              record.key,
              record.requestHash,
              record.state,
              c.json(record.response),
              record.createdAt.getTime(),
              record.expiresAt.getTime(),
            ];
            const inserted = await write(
              mysql
                ? `INSERT IGNORE INTO mailroom_idempotency (${columns}) VALUES ${r.values(1, 7)}`
                : `INSERT INTO mailroom_idempotency (${columns}) VALUES ${r.values(1, 7)} ON CONFLICT (project_id, idem_key) DO NOTHING`,
              values,
              tx,
            );
            if (inserted > 0) return { created: true };
            const row = await first(
              `SELECT * FROM mailroom_idempotency WHERE project_id = ? AND idem_key = ?${r.forUpdate}`,
              [record.projectId, record.key],
              tx,
            );
            if (!row) {
              // Dropped between the two statements: the key is free again.
              await write(
                `INSERT INTO mailroom_idempotency (${columns}) VALUES ${r.values(1, 7)}`,
                values,
                tx,
              );
              return { created: true };
            }
            const existing = c.idempotency(row);
            if (existing.expiresAt.getTime() > now.getTime()) return { created: false, existing };
            await write(
              'UPDATE mailroom_idempotency SET request_hash = ?, state = ?, response = ?, created_at = ?, expires_at = ? WHERE project_id = ? AND idem_key = ?',
              [...values.slice(2), record.projectId, record.key],
              tx,
            );
            return { created: true };
          },
        ),
      );
    },

    finishIdempotent(projectId, key, response) {
      return guard('finishIdempotent', async () => {
        await write(
          "UPDATE mailroom_idempotency SET state = 'done', response = ? WHERE project_id = ? AND idem_key = ?",
          [c.json(response), projectId, key],
        );
      });
    },

    dropIdempotent(projectId, key) {
      return guard('dropIdempotent', async () => {
        await write('DELETE FROM mailroom_idempotency WHERE project_id = ? AND idem_key = ?', [
          projectId,
          key,
        ]);
      });
    },

    pruneIdempotent(now, limit) {
      return guard('pruneIdempotent', async () => {
        if (limit <= 0) return 0;
        // MySQL refuses LIMIT in an IN subquery of the table being changed, but takes it on DELETE itself.
        return write(
          mysql
            ? 'DELETE FROM mailroom_idempotency WHERE expires_at <= ? LIMIT ?'
            : `DELETE FROM mailroom_idempotency WHERE (project_id, idem_key) IN
               (SELECT project_id, idem_key FROM mailroom_idempotency WHERE expires_at <= ? LIMIT ?)`,
          [now.getTime(), limit],
        );
      });
    },

    // Scheduling and retention

    rescheduleMailing(id, scheduleFor, status, now) {
      return guard('rescheduleMailing', () =>
        r.transaction(db, async (tx) => {
          // The row lock orders this against commitBatch, setMailingStatus and completeMailingIfSettled.
          const row = await first(
            `SELECT status FROM mailroom_mailings WHERE id = ?${r.forUpdate}`,
            [id],
            tx,
          );
          if (row?.status !== 'scheduled') return false;
          await write(
            'UPDATE mailroom_mailings SET status = ?, schedule_for = ?, updated_at = ? WHERE id = ?',
            [status, scheduleFor.getTime(), now.getTime(), id],
            tx,
          );
          await write(
            `UPDATE mailroom_deliveries SET next_attempt_at = ?, updated_at = ?
             WHERE mailing_id = ? AND status = 'queued' AND attempts = 0`,
            [scheduleFor.getTime(), now.getTime(), id],
            tx,
          );
          return true;
        }),
      );
    },

    firstSentAt(mailingId) {
      return guard('firstSentAt', async () => {
        const row = await first(
          'SELECT MIN(sent_at) AS first FROM mailroom_deliveries WHERE mailing_id = ?',
          [mailingId],
        );
        return row?.first === null || row?.first === undefined ? undefined : new Date(Number(row.first));
      });
    },

    pruneDeliveryContent(before, limit) {
      return guard('pruneDeliveryContent', async () => {
        if (limit <= 0) return 0;
        return write(
          mysql
            ? 'UPDATE mailroom_deliveries SET content = NULL WHERE content IS NOT NULL AND updated_at < ? LIMIT ?'
            : `UPDATE mailroom_deliveries SET content = NULL WHERE id IN
               (SELECT id FROM mailroom_deliveries WHERE content IS NOT NULL AND updated_at < ? LIMIT ?)`,
          [before.getTime(), limit],
        );
      });
    },

    // Settings of the installation

    ensureSetting(settingName, value, now) {
      return guard('ensureSetting', async () => {
        const columns = 'name, value, created_at';
        await write(
          mysql
            ? `INSERT IGNORE INTO mailroom_settings (${columns}) VALUES (?, ?, ?)`
            : `INSERT INTO mailroom_settings (${columns}) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
          [settingName, value, now.getTime()],
        );
        // Settings are never deleted: whoever inserted first, this reads the value that stays.
        const row = await first('SELECT value FROM mailroom_settings WHERE name = ?', [settingName]);
        if (typeof row?.value !== 'string') {
          throw new MailroomError('STORE_FAILED', `ensureSetting: ${settingName} was not stored`, {
            source: name,
          });
        }
        return row.value;
      });
    },
  };
  return store;
}
