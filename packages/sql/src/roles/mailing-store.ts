import type {
  BatchCommitResult,
  BatchWrite,
  DeliveryCounts,
  DeliveryRecord,
  MailingRecord,
  MailingStore,
  SourceJobRecord,
} from '@mailroom/core';
import { DELIVERY_STATUSES, MailroomError } from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import { JsonMemo } from '../dialects/sqlite/sqlite-writes.js';
import type { Row } from '../rows/codec.js';
import { MAILING_COLUMNS, SOURCE_JOB_COLUMNS } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';
import { writeOutbox } from './event-store.js';
import { andOpenAt } from './open-deliveries.js';

/** A read that finds whether the mailing still has an open delivery (the open-deliveries index serves it). */
const openDelivery = (dialect: SqlDialect) =>
  `SELECT 1 AS open FROM mailroom_deliveries WHERE mailing_id = ?${andOpenAt(dialect)} AND status IN ('queued', 'sending') LIMIT 1`;

/** `MailingStore` on SQL. Mailings, batches, their status, and the reads of their deliveries. */
export function sqlMailingStore(ctx: SqlContext): MailingStore {
  const { name, dialect, db, runner, codec, bulk, guard, all, first, write, pageAfter } = ctx;
  const openDeliveryRead = openDelivery(dialect);
  const openOnly = andOpenAt(dialect);
  const mailingColumns = MAILING_COLUMNS.join(', ');
  const sourceJobColumns = SOURCE_JOB_COLUMNS.join(', ');
  const getMailingRow = (id: string) => first('SELECT * FROM mailroom_mailings WHERE id = ?', [id]);
  const insertMailing = (tx: Db, mailing: MailingRecord) =>
    write(
      `INSERT INTO mailroom_mailings (${mailingColumns}) VALUES ${runner.values(1, MAILING_COLUMNS.length)}`,
      codec.mailingParams(mailing),
      tx,
    );
  const insertSourceJobs = async (tx: Db, jobs: readonly SourceJobRecord[]) => {
    for (const chunk of runner.chunk(jobs.map(codec.sourceJobParams), SOURCE_JOB_COLUMNS.length)) {
      await write(
        `INSERT INTO mailroom_source_jobs (${sourceJobColumns}) VALUES ${runner.values(chunk.length, SOURCE_JOB_COLUMNS.length)}`,
        chunk.flat(),
        tx,
      );
    }
  };

  /** One `commitBatch` on an open transaction: the mailing created or appended to, the batch, deliveries, profiles and jobs. */
  const commitInTransaction = async (tx: Db, batchWrite: BatchWrite): Promise<BatchCommitResult> => {
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
        `SELECT * FROM mailroom_mailings WHERE id = ?${runner.forUpdate}`,
        [target.mailingId],
        tx,
      );
      if (!row)
        throw new MailroomError('NOT_FOUND', 'commitBatch: the mailing does not exist', {
          source: name,
        });
      const current = codec.mailing(row);
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
  };

  return {
    // Mailings and batches

    commitBatch(batchWrite) {
      const single = dialect.commitBatch?.(codec, batchWrite);
      if (single) {
        return guard('commitBatch', async (): Promise<BatchCommitResult> => {
          const [row] = (await runner.run<Row>(db, single.text, single.params, true)).rows;
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
          return { inserted, mailing: codec.mailing(row) };
        });
      }
      return guard('commitBatch', () => runner.transaction(db, (tx) => commitInTransaction(tx, batchWrite)));
    },

    commitBatches(writes) {
      return guard('commitBatches', () =>
        runner.transaction(db, async (tx) => {
          const results: BatchCommitResult[] = [];
          for (const batchWrite of writes) results.push(await commitInTransaction(tx, batchWrite));
          return results;
        }),
      );
    },

    getMailing(projectId, ref) {
      return guard('getMailing', async () => {
        const row = await first('SELECT * FROM mailroom_mailings WHERE project_id = ? AND ref = ?', [
          projectId,
          ref,
        ]);
        return row && codec.mailing(row);
      });
    },

    getMailingById(id) {
      return guard('getMailingById', async () => {
        const row = await first('SELECT * FROM mailroom_mailings WHERE id = ?', [id]);
        return row && codec.mailing(row);
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
        return rows.map(codec.mailing);
      });
    },

    setMailingStatus(id, from, to, now, outbox) {
      return guard('setMailingStatus', async () => {
        if (from.length === 0) return false;
        const text = `UPDATE mailroom_mailings SET status = ?, updated_at = ? WHERE id = ? AND status IN ${runner.values(1, from.length)}`;
        const params = [to, now.getTime(), id, ...from];
        if (!outbox) return (await write(text, params)) > 0;
        return runner.transaction(db, async (tx) => {
          if ((await write(text, params, tx)) === 0) return false;
          await writeOutbox(runner, codec, tx, [outbox]);
          return true;
        });
      });
    },

    completeMailingIfSettled(id, now, outbox) {
      return guard('completeMailingIfSettled', async () => {
        // Called after every flush of outcomes, so nearly always while deliveries are still open: one
        // read outside a transaction answers that (one round trip where the locked check takes four).
        // An open delivery seen here can only settle later, and the flush that settles the last one
        // calls this again; the locked check below decides when none is seen.
        if (await first(openDeliveryRead, [id])) return false;
        return runner.transaction(db, async (tx) => {
          // Locking the mailing first serializes this check with commitBatch, which locks it too.
          const mailing = await first(
            `SELECT status FROM mailroom_mailings WHERE id = ?${runner.forUpdate}`,
            [id],
            tx,
          );
          if (!mailing || (mailing.status !== 'queued' && mailing.status !== 'sending')) return false;
          const open = await first(openDeliveryRead, [id], tx);
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
          await writeOutbox(runner, codec, tx, [outbox]);
          return true;
        });
      });
    },

    // Scheduling

    rescheduleMailing(id, scheduleFor, status, now) {
      return guard('rescheduleMailing', () =>
        runner.transaction(db, async (tx) => {
          // The row lock orders this against commitBatch, setMailingStatus and completeMailingIfSettled.
          const row = await first(
            `SELECT status FROM mailroom_mailings WHERE id = ?${runner.forUpdate}`,
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
             WHERE mailing_id = ?${openOnly} AND status = 'queued' AND attempts = 0`,
            [scheduleFor.getTime(), now.getTime(), id],
            tx,
          );
          return true;
        }),
      );
    },

    // A mailing's deliveries, read

    getDelivery(id) {
      return guard('getDelivery', async () => {
        const row = await first('SELECT * FROM mailroom_deliveries WHERE id = ?', [id]);
        return row && codec.delivery(row);
      });
    },

    findDelivery(mailingId, address) {
      return guard('findDelivery', async () => {
        const row = await first('SELECT * FROM mailroom_deliveries WHERE mailing_id = ? AND address = ?', [
          mailingId,
          address,
        ]);
        return row && codec.delivery(row);
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
        return rows.map(codec.delivery);
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

    countWaitingByHour(mailingId, now) {
      return guard('countWaitingByHour', async () => {
        // `%` is integer remainder on all three databases; the due index serves status and time.
        const rows = await all(
          `SELECT next_attempt_at - next_attempt_at % 3600000 AS hour, COUNT(*) AS n FROM mailroom_deliveries
           WHERE mailing_id = ?${openOnly} AND status = 'queued' AND next_attempt_at > ?
           GROUP BY next_attempt_at - next_attempt_at % 3600000 ORDER BY hour`,
          [mailingId, now.getTime()],
        );
        return rows.map((row) => ({ hour: new Date(Number(row.hour)), count: Number(row.n) }));
      });
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
  };
}
